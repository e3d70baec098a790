#include "report/export.h"

#include <fmt/format.h>

#include <set>

#include "compile/request.h"
#include "record/run_record.h"
#include "util/output.h"

namespace kopt::report {

using util::Json;

namespace {

using record::CandidateStatus;

// A row's status (load_run writes CandidateStatus's name, or a runner status or "not_run" for an ablation build).
std::optional<CandidateStatus> status_of(const Json& c) { return record::parse_candidate_status(c.value("status", std::string())); }

std::string invalidity(const std::optional<CandidateStatus>& status) {
  if (status) switch (*status) {
      case CandidateStatus::kOk: return "correct";
      case CandidateStatus::kCompileFailed: return "compile";
      case CandidateStatus::kIncorrect: return "correctness";
      case CandidateStatus::kTimedOut: return "timeout";
      case CandidateStatus::kCrashed: break;
    }
  return "runtime";  // crashed, or a run that never completed
}

const Json& array_at(const Json& j, const char* key) {
  static const Json empty = Json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : empty;
}
const Json& object_at(const Json& j, const char* key) {
  static const Json empty = Json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}

using util::csv_cell;

std::string number(const Json& v) {
  if (!v.is_number()) return "";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return fmt::format("{:.6g}", v.get<double>());
}

}  // namespace

util::Json t4_results(const util::Json& run) {
  Json results = Json::array();
  for (const auto& c : array_at(run, "candidates")) {
    const std::string status = c.value("status", std::string());
    const bool ok = status_of(c) == CandidateStatus::kOk;
    Json config = Json::object();
    for (const auto& [k, v] : object_at(c, "params").items()) config[k] = v;
    for (const auto& [m, on] : object_at(c, "guards").items())
      config[compile::method_guard(m)] = on.is_boolean() && on.get<bool>() ? 1 : 0;
    if (c.contains("flags") && c["flags"].is_array() && !c["flags"].empty()) {
      std::string flags;
      for (const auto& f : c["flags"]) flags += (flags.empty() ? "" : " ") + f.get<std::string>();
      config["nvcc_flags"] = flags;
    }
    Json times = {{"runtimes", ok && c.contains("samples_ms") ? c["samples_ms"] : Json::array()}};
    if (c.contains("compile_ms") && c["compile_ms"].is_number()) times["compilation_time"] = c["compile_ms"];
    Json measurements = Json::array();
    if (ok && c.contains("median_ms") && c["median_ms"].is_number()) {
      measurements.push_back({{"name", "time"}, {"value", c["median_ms"]}, {"unit", "ms"}});
      for (auto [key, name] : {std::pair{"ci95_low_ms", "time_ci95_low"}, std::pair{"ci95_high_ms", "time_ci95_high"}})
        if (c.contains(key) && c[key].is_number()) measurements.push_back({{"name", name}, {"value", c[key]}, {"unit", "ms"}});
      if (c.contains("samples")) measurements.push_back({{"name", "samples"}, {"value", c["samples"]}, {"unit", ""}});
    }
    if (c.contains("registers") && c["registers"].is_number())
      measurements.push_back({{"name", "registers_per_thread"}, {"value", c["registers"]}, {"unit", ""}});
    Json r = {{"configuration", config},
              {"times", times},
              {"invalidity", invalidity(status_of(c))},
              {"correctness", ok ? 1 : 0},
              {"measurements", measurements},
              {"objectives", Json::array({"time"})},
              {"kopt", {{"id", c.value("id", std::string())}, {"iteration", c.value("iteration", 0)},
                        {"role", c.value("role", std::string())}, {"methods", c.value("methods", Json::array())},
                        {"status", status}, {"reason", c.value("reason", std::string())}}}};
    if (!c.value("measured_at", std::string()).empty()) r["timestamp"] = c["measured_at"];
    results.push_back(r);
  }
  // Kernel Tuner's readers take the tunable parameters from the configurations, so every configuration has the
  // same keys: a guard a candidate lacks is off (0), a parameter it lacks null, no flags "". When a generator wrote
  // sources (an external command, a language model, a person), "source" says whose: "baseline" for the kernel's
  // own (the baseline and the built-in generator's points of it), else the id of the candidate that brought it.
  std::set<std::string> keys;
  bool by_source = false;
  for (const auto& r : results)
    for (const auto& [k, v] : r["configuration"].items()) keys.insert(k);
  auto own_source = [](const Json& c) {
    const std::string o = c.value("origin", std::string());
    return o.empty() || o == "baseline" || o == "builtin";
  };
  for (const auto& c : array_at(run, "candidates")) by_source = by_source || !own_source(c);
  size_t i = 0;
  for (auto& r : results) {
    Json& config = r["configuration"];
    for (const auto& k : keys) {
      if (config.contains(k)) continue;
      if (k == "nvcc_flags") config[k] = "";
      else if (k.rfind("KOPT_", 0) == 0) config[k] = 0;
      else config[k] = nullptr;
    }
    if (by_source) {
      const Json& c = array_at(run, "candidates")[i];
      config["source"] = own_source(c) ? std::string("baseline") : c.value("id", std::string());
    }
    ++i;
  }
  const Json& info = run.value("run", Json::object());
  return {{"schema_version", kT4SchemaVersion},
          {"metadata", {{"timeunit", "milliseconds"},
                        {"kopt", {{"kernel", info.value("kernel", std::string())}, {"dims", info.value("dims", Json::object())},
                                  {"gpu", info.value("gpu", std::string())}, {"run_dir", info.value("dir", std::string())},
                                  {"kopt_version", info.value("kopt_version", std::string())},
                                  {"champion_id", run.value("champion_id", std::string())}}}}},
          {"results", results}};
}

std::string candidates_csv(const util::Json& run) {
  std::set<std::string> params;
  const Json& cands = array_at(run, "candidates");
  for (const auto& c : cands)
    for (const auto& [k, v] : object_at(c, "params").items()) params.insert(k);
  std::string out = "id,iteration,role";
  for (const auto& p : params) out += "," + csv_cell(p);
  out += ",methods,median_ms,ci95_low_ms,ci95_high_ms,status,reason\r\n";
  for (const auto& c : cands) {
    out += csv_cell(c.value("id", std::string())) + "," + number(c.value("iteration", Json())) + "," + csv_cell(c.value("role", std::string()));
    const Json& pv = object_at(c, "params");
    for (const auto& p : params) out += "," + (pv.contains(p) ? number(pv[p]) : std::string());
    std::string methods;
    for (const auto& m : c.value("methods", Json::array())) methods += (methods.empty() ? "" : "+") + m.get<std::string>();
    const bool ok = status_of(c) == CandidateStatus::kOk;
    out += "," + csv_cell(methods);
    for (const char* k : {"median_ms", "ci95_low_ms", "ci95_high_ms"}) out += "," + (ok ? number(c.value(k, Json())) : std::string());
    out += "," + csv_cell(c.value("status", std::string())) + "," + csv_cell(c.value("reason", std::string())) + "\r\n";
  }
  return out;
}

}  // namespace kopt::report
