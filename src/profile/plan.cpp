#include "profile/plan.h"

#include <algorithm>

#include "profile/registry.h"
#include "util/strings.h"

namespace kopt::profile {

std::string_view describe(CacheControl c) { return c == CacheControl::kAll ? "all" : "none"; }

std::string_view describe(PlanLevel l) {
  switch (l) {
    case PlanLevel::kFull: return "full";
    case PlanLevel::kLight: return "light";
    case PlanLevel::kBase: return "base";
  }
  return "?";
}

std::optional<PlanLevel> parse_plan_level(std::string_view s) {
  for (PlanLevel l : {PlanLevel::kFull, PlanLevel::kLight, PlanLevel::kBase})
    if (describe(l) == s) return l;
  return std::nullopt;
}

const std::vector<std::string>& pass1_sections() {
  static const std::vector<std::string> s = {"SpeedOfLight", "LaunchStats", "Occupancy"};
  return s;
}

namespace {
std::vector<std::string> axis_sections(Axis a, PlanLevel level) {
  if (level == PlanLevel::kBase) return {};
  switch (a) {
    case Axis::kMemory:
      if (level == PlanLevel::kLight) return {"MemoryWorkloadAnalysis"};
      return {"MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables", "MemoryWorkloadAnalysis_Chart"};
    case Axis::kCompute:
      if (level == PlanLevel::kLight) return {"ComputeWorkloadAnalysis"};
      return {"ComputeWorkloadAnalysis", "InstructionStats"};
    case Axis::kLatency:
      if (level == PlanLevel::kLight) return {"WarpStateStats"};
      return {"WarpStateStats", "SchedulerStats", "Occupancy"};
  }
  return {};
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}
}  // namespace

std::vector<std::string> sections_for(const std::vector<Axis>& axes, PlanLevel level) {
  std::vector<std::string> out = pass1_sections();
  for (Axis a : axes)
    for (const auto& s : axis_sections(a, level)) add_unique(out, s);
  return out;
}

std::vector<std::string> registry_metrics_for(const std::vector<Axis>& axes) {
  std::vector<std::string> out;
  for (Axis a : axes)
    for (const MetricSpec* s : metrics_for_axis(a)) {
      add_unique(out, s->name);
      if (!s->scale_metric.empty()) add_unique(out, s->scale_metric);
    }
  return out;
}

util::Json to_json(const ProfilePlan& p) {
  util::Json axes = util::Json::array();
  for (Axis a : p.axes) axes.push_back(axis_name(a));
  return {{"fixed", p.fixed},       {"axes", axes},           {"level", describe(p.level)},
          {"sections", p.sections}, {"metrics", p.metrics},   {"unavailable_metrics", p.unavailable},
          {"reason", p.reason}};
}

Result<ProfilePlan> plan_from_json(const util::Json& j) {
  try {
    ProfilePlan p;
    p.fixed = j.at("fixed").get<bool>();
    for (const auto& a : j.at("axes")) {
      auto axis = parse_axis(a.get<std::string>());
      if (!axis) return input_error("profile plan: unknown axis '" + a.get<std::string>() + "'");
      p.axes.push_back(*axis);
    }
    auto level = parse_plan_level(j.at("level").get<std::string>());
    if (!level) return input_error("profile plan: unknown level '" + j.at("level").get<std::string>() + "'");
    p.level = *level;
    p.sections = j.at("sections").get<std::vector<std::string>>();
    p.metrics = j.at("metrics").get<std::vector<std::string>>();
    p.unavailable = j.value("unavailable_metrics", std::vector<std::string>{});
    p.reason = j.value("reason", "");
    return p;
  } catch (const std::exception& e) {
    return input_error(std::string("profile plan JSON is malformed: ") + e.what());
  }
}

std::vector<std::string> ncu_profile_command(const NcuProfileArgs& a) {
  std::vector<std::string> cmd = {a.ncu,
                                  "--profile-from-start", "off",
                                  "--target-processes",   "all",
                                  "--clock-control",      "none",
                                  "--cache-control",      std::string(describe(a.cache_control))};
  for (const auto& s : a.sections) {
    cmd.push_back("--section");
    cmd.push_back(s);
  }
  if (!a.metrics.empty()) {
    cmd.push_back("--metrics");
    cmd.push_back(util::join(a.metrics, ","));
  }
  if (a.print_raw) cmd.insert(cmd.end(), {"--csv", "--page", "raw"});
  cmd.insert(cmd.end(), {"-o", a.report_base, "-f"});
  cmd.insert(cmd.end(), a.target_argv.begin(), a.target_argv.end());
  return cmd;
}

std::vector<std::string> ncu_import_command(const std::string& ncu, const std::string& report, const std::string& page,
                                            bool csv) {
  std::vector<std::string> cmd = {ncu, "--import", report};
  if (csv) cmd.push_back("--csv");
  cmd.insert(cmd.end(), {"--page", page});
  return cmd;
}

std::vector<std::string> ncu_query_metrics_command(const std::string& ncu, const std::string& chip) {
  return {ncu, "--query-metrics", "--chip", chip};
}

std::vector<std::string> ncu_version_command(const std::string& ncu) { return {ncu, "--version"}; }

}  // namespace kopt::profile
