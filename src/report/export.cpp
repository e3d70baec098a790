#include "report/export.h"

#include <fmt/format.h>

#include <set>

#include "compile/request.h"
#include "record/run_record.h"
#include "report/run_data.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::report {

using util::Json;

namespace {

using record::CandidateStatus;

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

using util::csv_cell;

std::string number(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }
std::string number(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; }

}  // namespace

util::Json t4_results(const util::Json& run) {
  const std::vector<CandidateRow> cands = candidate_rows(run);
  Json results = Json::array();
  for (const auto& c : cands) {
    Json config = Json::object();
    for (const auto& [k, v] : c.params) config[k] = v;
    for (const auto& [m, on] : c.guards) config[compile::method_guard(m)] = on ? 1 : 0;
    if (!c.flags.empty()) config["nvcc_flags"] = util::join(c.flags, " ");
    Json times = {{"runtimes", c.ok() && c.samples_ms ? Json(*c.samples_ms) : Json::array()}};
    if (c.compile_ms) times["compilation_time"] = *c.compile_ms;
    Json measurements = Json::array();
    if (c.measured_ok()) {
      measurements.push_back({{"name", "time"}, {"value", *c.median_ms}, {"unit", "ms"}});
      if (c.ci95_low_ms) measurements.push_back({{"name", "time_ci95_low"}, {"value", *c.ci95_low_ms}, {"unit", "ms"}});
      if (c.ci95_high_ms) measurements.push_back({{"name", "time_ci95_high"}, {"value", *c.ci95_high_ms}, {"unit", "ms"}});
      if (c.samples) measurements.push_back({{"name", "samples"}, {"value", *c.samples}, {"unit", ""}});
    }
    if (c.registers) measurements.push_back({{"name", "registers_per_thread"}, {"value", *c.registers}, {"unit", ""}});
    Json r = {{"configuration", config},
              {"times", times},
              {"invalidity", invalidity(c.status)},
              {"correctness", c.ok() ? 1 : 0},
              {"measurements", measurements},
              {"objectives", Json::array({"time"})},
              {"kopt", {{"id", c.id}, {"iteration", c.iteration.value_or(0)}, {"role", c.role}, {"methods", c.methods},
                        {"status", c.status_text}, {"reason", c.reason}}}};
    if (!c.measured_at.empty()) r["timestamp"] = c.measured_at;
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
  auto own_source = [](const CandidateRow& c) { return c.origin.empty() || c.origin == "baseline" || c.origin == "builtin"; };
  for (const auto& c : cands) by_source = by_source || !own_source(c);
  size_t i = 0;
  for (auto& r : results) {
    Json& config = r["configuration"];
    for (const auto& k : keys) {
      if (config.contains(k)) continue;
      if (k == "nvcc_flags") config[k] = "";
      else if (k.rfind("KOPT_", 0) == 0) config[k] = 0;
      else config[k] = nullptr;
    }
    if (by_source) config["source"] = own_source(cands[i]) ? std::string("baseline") : cands[i].id;
    ++i;
  }
  const RunFacts info = run_facts(run);
  return {{"schema_version", kT4SchemaVersion},
          {"metadata", {{"timeunit", "milliseconds"},
                        {"kopt", {{"kernel", info.kernel}, {"dims", info.dims}, {"gpu", info.gpu}, {"run_dir", info.dir},
                                  {"kopt_version", info.kopt_version}, {"champion_id", info.champion_id}}}}},
          {"results", results}};
}

std::string candidates_csv(const util::Json& run) {
  const std::vector<CandidateRow> cands = candidate_rows(run);
  std::set<std::string> params;
  for (const auto& c : cands)
    for (const auto& [k, v] : c.params) params.insert(k);
  std::string out = "id,iteration,role";
  for (const auto& p : params) out += "," + csv_cell(p);
  out += ",methods,median_ms,ci95_low_ms,ci95_high_ms,status,reason\r\n";
  for (const auto& c : cands) {
    out += csv_cell(c.id) + "," + number(c.iteration) + "," + csv_cell(c.role);
    for (const auto& p : params) out += "," + (c.params.count(p) ? std::to_string(c.params.at(p)) : std::string());
    out += "," + csv_cell(util::join(c.methods, "+"));
    for (const auto* v : {&c.median_ms, &c.ci95_low_ms, &c.ci95_high_ms}) out += "," + (c.ok() ? number(*v) : std::string());
    out += "," + csv_cell(c.status_text) + "," + csv_cell(c.reason) + "\r\n";
  }
  return out;
}

}  // namespace kopt::report
