#include "sass/signature.h"

namespace kopt::sass {

Result<Signature> signature_from_json(const util::Json& j) {
  if (!j.is_object()) return input_error("a SASS signature must be a JSON object");
  Signature s;
  auto list = [&](const char* key, std::vector<std::string>& out) -> Status {
    if (!j.contains(key)) return ok_status();
    if (!j[key].is_array()) return input_error(std::string("signature '") + key + "' must be a list of strings");
    for (const auto& v : j[key]) {
      if (!v.is_string() || v.get<std::string>().empty())
        return input_error(std::string("signature '") + key + "' must hold non-empty strings");
      out.push_back(v.get<std::string>());
    }
    return ok_status();
  };
  KOPT_TRY(list("require_any", s.require_any));
  KOPT_TRY(list("require_all", s.require_all));
  KOPT_TRY(list("forbid", s.forbid));
  if (j.contains("min_counts")) {
    if (!j["min_counts"].is_object()) return input_error("signature 'min_counts' must be an object");
    for (auto it = j["min_counts"].begin(); it != j["min_counts"].end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int>() < 1)
        return input_error("signature min_counts['" + it.key() + "'] must be a positive integer");
      s.min_counts[it.key()] = it.value().get<int>();
    }
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& k = it.key();
    if (k != "require_any" && k != "require_all" && k != "forbid" && k != "min_counts")
      return input_error("unknown signature key '" + k + "'");
  }
  return s;
}

util::Json to_json(const Signature& s) {
  util::Json j = util::Json::object();
  if (!s.require_any.empty()) j["require_any"] = s.require_any;
  if (!s.require_all.empty()) j["require_all"] = s.require_all;
  if (!s.forbid.empty()) j["forbid"] = s.forbid;
  if (!s.min_counts.empty()) j["min_counts"] = s.min_counts;
  return j;
}

}  // namespace kopt::sass
