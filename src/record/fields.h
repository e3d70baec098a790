#pragma once
// The run record's strict reading, shared by its readers (run_record.cpp, summary_record.cpp, and report/run_data.cpp
// for load_run's own document) and nothing else:
// absent or null -> nullopt, a wrong type -> RecordError naming the field ("history[3].status: expected a string,
// found a number").
#include <concepts>
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

// ---- one field list per struct ------------------------------------------------------------------------------------
// A struct's fields are named once, in `each_field(s, f)` (f("key", s.member) for each; found by argument-dependent
// lookup in kopt::record), and written and read by the two templates below: an optional absent from the file stays
// nullopt (written as null where `null_when_absent(s)`, else left out), any other member absent keeps its default.

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class T>
struct is_map<std::map<std::string, T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class T>
bool null_when_absent(const T&) {
  return false;
}

template <class T>
Json fields_to_json(const T& s);
template <class T>
T fields_from_json(const Json& j, const std::string& where);

template <class T>
Json write_value(const T& v) {
  if constexpr (std::is_same_v<T, Json>) {
    return v;
  } else if constexpr (requires { typename T::kept_number; }) {
    return v.value;
  } else if constexpr (is_map<T>::value) {
    Json o = Json::object();
    for (const auto& [k, x] : v) o[k] = write_value(x);
    return o;
  } else if constexpr (is_vector<T>::value) {
    Json a = Json::array();
    for (const auto& x : v) a.push_back(write_value(x));
    return a;
  } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
    return Json(v);
  } else {
    return fields_to_json(v);
  }
}

template <class T>
void read_value(const Json& v, const std::string& field, T& out) {
  if constexpr (std::is_same_v<T, Json>) {
    out = v;
  } else if constexpr (requires { typename T::kept_number; }) {  // a number kept as written (record/run_files.h)
    if (!v.is_number()) wrong(field, "a number", v);
    out.value = v;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) wrong(field, "a string", v);
    out = v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) wrong(field, "true or false", v);
    out = v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) wrong(field, "an integer", v);
    out = v.get<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) wrong(field, "a number", v);
    out = v.get<T>();
  } else if constexpr (is_map<T>::value) {
    if (!v.is_object()) wrong(field, "an object", v);
    out.clear();
    for (const auto& [k, x] : v.items()) read_value(x, at(field, k), out[k]);
  } else if constexpr (is_vector<T>::value) {
    if (!v.is_array()) wrong(field, "an array", v);
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) read_value(v[i], at(field, i), out.emplace_back());
  } else {
    out = fields_from_json<T>(v, field);
  }
}

template <class T>
Json fields_to_json(const T& s) {
  Json j = Json::object();
  each_field(s, [&](const char* key, const auto& v) {
    if constexpr (is_optional<std::decay_t<decltype(v)>>::value) {
      if (v) j[key] = write_value(*v);
      else if (null_when_absent(s)) j[key] = nullptr;
    } else {
      j[key] = write_value(v);
    }
  });
  return j;
}

template <class T>
T fields_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  T s;
  each_field(s, [&](const char* key, auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::optional<Json>>) {
      v = opt_any(j, key);  // free-form: a null the file holds is kept
    } else if (const Json* x = find(j, key)) {
      if constexpr (is_optional<V>::value) read_value(*x, at(where, key), v.emplace());
      else read_value(*x, at(where, key), v);
    }
  });
  return s;
}

}  // namespace kopt::record::fields

namespace kopt::record {
// A record whose fields KOPT_RECORD_FIELDS names, from its JSON (RecordError naming the field) and to it.
template <class T>
T read_record(const util::Json& j, const std::string& where = "") {
  return fields::fields_from_json<T>(j, where);
}
template <class T>
util::Json write_record(const T& v) {
  return fields::fields_to_json(v);
}
}  // namespace kopt::record

// KOPT_RECORD_FIELDS(Type, a, b, c) names Type's fields once, as each_field(s, f): f("a", s.a); f("b", s.b); ...
// (the JSON key is the member's name). KOPT_FOR_EACH applies a macro to each argument (C++20 __VA_OPT__).
#define KOPT_PARENS ()
#define KOPT_EXPAND(...) KOPT_EXPAND3(KOPT_EXPAND3(KOPT_EXPAND3(KOPT_EXPAND3(__VA_ARGS__))))
#define KOPT_EXPAND3(...) KOPT_EXPAND2(KOPT_EXPAND2(KOPT_EXPAND2(KOPT_EXPAND2(__VA_ARGS__))))
#define KOPT_EXPAND2(...) KOPT_EXPAND1(KOPT_EXPAND1(KOPT_EXPAND1(KOPT_EXPAND1(__VA_ARGS__))))
#define KOPT_EXPAND1(...) __VA_ARGS__
#define KOPT_FOR_EACH(macro, ...) __VA_OPT__(KOPT_EXPAND(KOPT_FOR_EACH_HELPER(macro, __VA_ARGS__)))
#define KOPT_FOR_EACH_HELPER(macro, a1, ...) macro(a1) __VA_OPT__(KOPT_FOR_EACH_AGAIN KOPT_PARENS(macro, __VA_ARGS__))
#define KOPT_FOR_EACH_AGAIN() KOPT_FOR_EACH_HELPER
#define KOPT_RECORD_FIELD(x) f(#x, s.x);
#define KOPT_RECORD_FIELDS(Type, ...)                                                            \
  template <class S, class F>                                                                    \
  requires std::same_as<std::remove_const_t<S>, Type> void each_field(S& s, F&& f) {             \
    KOPT_FOR_EACH(KOPT_RECORD_FIELD, __VA_ARGS__)                                                \
  }
// ...and its to_json / FROM(json, where) through the field list.
#define KOPT_RECORD_JSON(Type, FROM)                                                              \
  util::Json to_json(const Type& v) { return fields::fields_to_json(v); }                          \
  Type FROM(const util::Json& j, const std::string& where) { return fields::fields_from_json<Type>(j, where); }
