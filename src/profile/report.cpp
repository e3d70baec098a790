#include "profile/report.h"

#include <fmt/format.h>

#include "profile/metric_names.h"
#include "util/fs.h"

namespace kopt::profile {

namespace {

util::Json opt_json(const std::optional<double>& v) { return v ? util::Json(*v) : util::Json(nullptr); }

util::Json rule_json(const RuleResult& r) {
  return {{"kernel_id", r.kernel_id},  {"kernel", r.kernel_name},          {"section", r.section},
          {"rule", r.rule},            {"type", describe(r.type)},         {"message", r.message},
          {"speedup_pct", opt_json(r.speedup_pct)}, {"speedup_type", r.speedup_type}};
}

util::Json classification_json(const Classification& c) {
  util::Json axes = util::Json::array();
  for (Axis a : c.binding) axes.push_back(axis_name(a));
  return {{"binding", axes}, {"known", c.known}, {"reason", c.reason}};
}

std::string fmt_opt(const std::optional<double>& v, const char* unit, int digits = 1) {
  return v ? fmt::format("{:.{}f}{}", *v, digits, unit) : "unknown";
}

std::string fmt_duration(const std::optional<double>& ns) {
  if (!ns) return "unknown";
  if (*ns >= 1e6) return fmt::format("{:.3f} ms", *ns / 1e6);
  if (*ns >= 1e3) return fmt::format("{:.1f} us", *ns / 1e3);
  return fmt::format("{:.0f} ns", *ns);
}

}  // namespace

util::Json to_json(const ProfileResult& r) {
  util::Json j;
  j["ncu_version"] = r.ncu_version;
  j["cache_control"] = r.cache_control;
  j["clock_control"] = "none";
  j["report_path"] = r.report_path.string();
  j["profiling_wall_ms"] = r.profiling_wall_ms;
  j["plan"] = to_json(r.plan);
  j["classification"] = classification_json(r.classification);
  j["kernels"] = util::Json::array();
  for (const auto& k : r.kernels) {
    util::Json metrics = util::Json::object();
    for (const auto& [name, v] : k.record.metrics) {
      util::Json m = {{"value", opt_json(v.value)}, {"unit", v.unit}};
      if (!v.value && !v.text.empty()) m["text"] = v.text;
      metrics[name] = m;
    }
    util::Json rules = util::Json::array();
    for (const auto& rr : k.rules) rules.push_back(rule_json(rr));
    j["kernels"].push_back({{"id", k.record.id},
                            {"name", k.record.name},
                            {"grid_size", k.record.grid_size},
                            {"block_size", k.record.block_size},
                            {"duration_ns", opt_json(k.duration_ns)},
                            {"registers_per_thread", opt_json(k.record.number(std::string(metric::kRegisters)))},
                            {"sol_compute_pct", opt_json(k.record.number(std::string(metric::kComputeSol)))},
                            {"sol_memory_pct", opt_json(k.record.number(std::string(metric::kMemorySol)))},
                            {"achieved_occupancy_pct",
                             opt_json(k.record.number(std::string(metric::kAchievedOccupancy)))},
                            {"classification", classification_json(k.classification)},
                            {"rules", rules},
                            {"metrics", metrics}});
  }
  util::Json agg = util::Json::object();
  for (const auto& [name, v] : r.aggregate.metrics)
    agg[name] = {{"value", opt_json(v.value)},
                 {"unit", v.unit},
                 {"method", describe(v.method)},
                 {"time_coverage", v.time_coverage}};
  j["aggregate"] = {{"kernels", r.aggregate.kernels},
                    {"total_duration_ns", opt_json(r.aggregate.total_duration_ns)},
                    {"kernels_without_duration", r.aggregate.kernels_without_duration},
                    {"metrics", agg}};
  util::Json top = util::Json::object();
  for (Axis a : kAllAxes) {
    util::Json list = util::Json::array();
    for (const auto& m : r.top_for(a)) {
      util::Json rules = util::Json::array();
      for (const auto& rr : m.rules) rules.push_back(rule_json(rr));
      list.push_back({{"metric", m.spec->name},
                      {"name_used", m.name_used},
                      {"value", m.value},
                      {"unit", m.spec->unit},
                      {"ideal", m.spec->ideal},
                      {"direction", describe(m.spec->direction)},
                      {"scale", m.scale},
                      {"distance", m.distance},
                      {"section", m.spec->section},
                      {"description", m.spec->description},
                      {"rules", rules}});
    }
    top[std::string(axis_name(a))] = list;
  }
  j["top_n"] = r.top_n;
  j["top_metrics"] = top;
  j["missing_metrics"] = util::Json::array();
  for (const auto& m : r.missing) j["missing_metrics"].push_back({{"metric", m.name}, {"where", m.where}});
  j["notes"] = r.notes;
  return j;
}

std::string format_summary(const ProfileResult& r, int top_n) {
  std::string s;
  s += fmt::format("Nsight Compute {} | {} kernel{} | {} of kernel time | cache-control {}, clock-control none\n",
                   r.ncu_version, r.kernels.size(), r.kernels.size() == 1 ? "" : "s",
                   fmt_duration(r.aggregate.total_duration_ns), r.cache_control);
  s += "plan: axes ";
  for (size_t i = 0; i < r.plan.axes.size(); ++i) s += (i ? "," : "") + std::string(axis_name(r.plan.axes[i]));
  s += fmt::format(" | level {} | sections ", describe(r.plan.level));
  for (size_t i = 0; i < r.plan.sections.size(); ++i) s += (i ? "," : "") + r.plan.sections[i];
  s += "\n";
  s += "binding: ";
  for (size_t i = 0; i < r.classification.binding.size(); ++i)
    s += (i ? ", " : "") + std::string(axis_name(r.classification.binding[i]));
  s += " (" + r.classification.reason + ")\n\nkernels:\n";
  for (const auto& k : r.kernels) {
    s += fmt::format("  [{}] {}\n      grid {} block {} | {} regs/thread\n", k.record.id, k.record.name,
                     k.record.grid_size, k.record.block_size,
                     fmt_opt(k.record.number(std::string(metric::kRegisters)), "", 0));
    s += fmt::format("      {} | SOL compute {} memory {} | achieved occupancy {}\n", fmt_duration(k.duration_ns),
                     fmt_opt(k.record.number(std::string(metric::kComputeSol)), " %"),
                     fmt_opt(k.record.number(std::string(metric::kMemorySol)), " %"),
                     fmt_opt(k.record.number(std::string(metric::kAchievedOccupancy)), " %"));
  }
  s += fmt::format("\ntop {} metrics per axis (distance from ideal, 0..1):\n", top_n);
  for (Axis a : kAllAxes) {
    s += fmt::format("  {}:\n", axis_name(a));
    const auto& list = r.top_for(a);
    if (list.empty()) s += "    (no metric away from its ideal, or none collected)\n";
    int i = 0;
    for (const auto& m : list) {
      if (i >= top_n) break;
      s += fmt::format("    {}. {} = {:.4g}{}{} (ideal {:g}, distance {:.2f}) {}\n", ++i, m.name_used, m.value,
                       m.spec->unit.empty() ? "" : " ", m.spec->unit, m.spec->ideal, m.distance, m.spec->description);
      for (const auto& rule : m.rules)
        s += fmt::format("       {} [{}{}] {}\n", describe(rule.type), rule.section,
                         rule.speedup_pct ? fmt::format(", est. speedup {:.1f} %", *rule.speedup_pct) : "",
                         rule.message);
    }
  }
  if (!r.missing.empty()) {
    s += "\nmissing metrics (unknown, not 0):\n";
    for (const auto& m : r.missing) s += fmt::format("  {} ({})\n", m.name, m.where);
  }
  for (const auto& n : r.notes) s += "note: " + n + "\n";
  s += "report: " + r.report_path.string() + " (open it in Nsight Compute)\n";
  return s;
}

std::filesystem::path metrics_json_path(const std::filesystem::path& out_dir, const std::string& name) {
  return out_dir / (name + "_metrics.json");
}

Status write_metrics_json(const std::filesystem::path& path, const util::Json& body) {
  return util::write_json_atomic(path, "profile", body);
}

Status write_profile_outputs(const ProfileResult& r) {
  KOPT_TRY(write_metrics_json(r.json_path, to_json(r)));
  return util::write_file_atomic(r.summary_path, format_summary(r, r.top_n));
}

}  // namespace kopt::profile
