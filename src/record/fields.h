#pragma once
// The run record's strict reading, shared by its readers (run_record.cpp, summary_record.cpp, and report/run_data.cpp
// for load_run's own document) and nothing else:
// absent or null -> nullopt, a wrong type -> RecordError naming the field ("history[3].status: expected a string,
// found a number").
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "record/run_record.h"

namespace kopt::record::fields {

using util::Json;

// ---- strict reading: absent or null -> nullopt, a wrong type -> RecordError naming the field ------------------

inline std::string at(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }
inline std::string at(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

[[noreturn]] inline void wrong(const std::string& field, const char* expected, const Json& v) {
  throw RecordError(field + ": expected " + expected + ", found " + (v.is_number() ? "a number" : std::string("a ") + v.type_name()));
}

inline void need_object(const Json& j, const std::string& where) {
  if (!j.is_object()) wrong(where.empty() ? "the file" : where, "an object", j);
}

inline const Json* find(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

inline std::optional<std::string> opt_string(const Json& j, const char* key, const std::string& where) {
  const Json* v = find(j, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong(at(where, key), "a string", *v);
  return v->get<std::string>();
}
inline std::optional<double> opt_number(const Json& j, const char* key, const std::string& where) {
  const Json* v = find(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong(at(where, key), "a number", *v);
  return v->get<double>();
}
inline std::optional<int64_t> opt_int(const Json& j, const char* key, const std::string& where) {
  const Json* v = find(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) wrong(at(where, key), "an integer", *v);
  return v->get<int64_t>();
}
inline std::optional<bool> opt_bool(const Json& j, const char* key, const std::string& where) {
  const Json* v = find(j, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong(at(where, key), "true or false", *v);
  return v->get<bool>();
}
inline const Json* opt_array(const Json& j, const char* key, const std::string& where) {
  const Json* v = find(j, key);
  if (v && !v->is_array()) wrong(at(where, key), "an array", *v);
  return v;
}
inline const Json* opt_object(const Json& j, const char* key, const std::string& where) {
  const Json* v = find(j, key);
  if (v && !v->is_object()) wrong(at(where, key), "an object", *v);
  return v;
}
inline std::optional<Json> opt_any(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  return j.at(key);
}

inline std::optional<std::vector<std::string>> opt_strings(const Json& j, const char* key, const std::string& where) {
  const Json* a = opt_array(j, key, where);
  if (!a) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < a->size(); ++i) {
    if (!(*a)[i].is_string()) wrong(at(at(where, key), i), "a string", (*a)[i]);
    out.push_back((*a)[i].get<std::string>());
  }
  return out;
}
template <class T>
std::optional<std::map<std::string, T>> opt_map(const Json& j, const char* key, const std::string& where) {
  const Json* o = opt_object(j, key, where);
  if (!o) return std::nullopt;
  std::map<std::string, T> out;
  for (const auto& [k, v] : o->items()) {
    const std::string f = at(at(where, key), k);
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) wrong(f, "a string", v);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) wrong(f, "true or false", v);
    } else if constexpr (std::is_same_v<T, double>) {
      if (!v.is_number()) wrong(f, "a number", v);
    } else {
      if (!v.is_number_integer()) wrong(f, "an integer", v);
    }
    out[k] = v.template get<T>();
  }
  return out;
}

inline Json num_or_null(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

inline std::string meta_time(const Json& j) {
  const Json* m = opt_object(j, "meta", "");
  return m ? opt_string(*m, "time", "meta").value_or("") : std::string();
}


}  // namespace kopt::record::fields
