// The champion's evidence: Nsight Compute profiles (through the profile cache), the roofline position and the method
// budget it gives.
#include <ctime>

#include "loop/optimizer.h"
#include "loop/phase.h"
#include "pipeline/placement.h"
#include "pipeline/triton.h"
#include "profile/query_metrics.h"
#include "profile/report.h"
#include "roofline/svg.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/progress.h"

namespace kopt::loop {

namespace fs = std::filesystem;

// The profile cache's key (docs/PROFILING.md "The profile cache"): what the profile measures (the library's bytes,
// or the Triton kernel's source and configuration; the golden data's request; the plan it starts from; the top-N),
// and where (the GPU, the driver, ncu). Empty when the library cannot be read.
std::string Optimizer::code_identity(const fs::path& lib, const search::Candidate* c) const {
  util::Hasher h;
  if (triton()) {
    auto text = util::read_file(prep_.kernel);
    if (!text) return "";
    h.add("triton").add(*text).add((c ? pipeline::triton_config(*c) : prep_.triton_config).dump());
  } else {
    auto bytes = util::read_file(lib);
    if (!bytes) return "";
    h.add("library").add(*bytes);
  }
  return h.hex();
}

std::string Optimizer::profile_key(const fs::path& lib, const search::Candidate* c) const {
  const std::string code = code_identity(lib, c);
  if (code.empty()) return "";
  util::Hasher h;
  h.add("kopt-profile-2").add(code);
  const auto& m = prep_.manifest;
  h.add(m.contains("golden_cache") ? m["golden_cache"].value("key", std::string()) : std::string());
  h.add(m.value("dims", util::Json::object()).dump()).add(m.value("buffers", util::Json::array()).dump());
  h.add(profile::to_json(plan_).dump()).add(std::to_string(o_.ncu_num));
  const auto meta = util::meta_info();
  h.add(gpu_.name).add(meta.driver).add(meta.ncu);  // the model, not the unit: a profile counts the same on both
  return h.hex();
}

Result<std::map<std::string, double>> Optimizer::profile(const fs::path& lib, const search::Candidate* c, const fs::path& out_dir,
                                                        const std::string& name) {
  Phase p(*this, "profile");
  // The same library, golden data, plan, GPU and tools profiled before: its metrics, summary, plan and the metrics
  // file's body from the cache, the entry named in out_dir (KOPT_PROFILE_CACHE=off profiles every time). An entry
  // made before it kept the metrics file (<name>_metrics.json, the page's profile columns) is profiled again.
  const auto cache = lab_.profile_cache_dir();
  const std::string key = cache ? profile_key(lib, c) : std::string();
  if (!key.empty())
    if (auto j = util::read_json(*cache / (key + ".json"));
        j && j->is_object() && j->contains("metrics") && j->contains("report") && (*j)["report"].is_object())
      if (auto plan = profile::plan_from_json(j->value("plan", util::Json())); plan) {
        plan_ = *plan;
        st_.profile_plan = profile::to_json(plan_);
        std::error_code ec;
        fs::create_directories(out_dir, ec);
        KOPT_TRY(util::write_file_atomic(out_dir / (name + "_summary.txt"), j->value("summary", std::string())));
        KOPT_TRY(profile::write_metrics_json(profile::metrics_json_path(out_dir, name), (*j)["report"]));
        KOPT_TRY(write_json(out_dir / (name + "_profile_cached.json"), "profile_cached",
                            {{"entry", (*cache / (key + ".json")).string()}, {"made", j->value("made", std::string())},
                             {"run_dir", j->value("run_dir", std::string())}}));
        say("  profile of {}: from the cache (made {}; KOPT_PROFILE_CACHE=off profiles again)", name,
            j->value("made", std::string("?")));
        return j->at("metrics").get<std::map<std::string, double>>();
      }
  util::Progress progress("  profiling " + name + " (Nsight Compute)");
  runner::RunRequest rr;
  if (triton()) {
    rr.triton_kernel = prep_.kernel;
    rr.triton_configs = {c ? pipeline::triton_config(*c) : prep_.triton_config};
  } else {
    rr.libs = {lib};
  }
  rr.golden_dir = prep_.golden_dir;
  rr.result_json = out_dir / (name + "_profile_run.json");
  rr.mode = runner::RunMode::kProfile;
  rr.tol = prep_.tol;
  profile::ProfileRequest req;
  req.target_argv = runner::child_argv(rr);
  req.out_dir = out_dir;
  req.name = name;
  req.ncu_path = toolchain::find_ncu();
  req.chip = profile::chip_for_compute_capability(gpu_.cc_major, gpu_.cc_minor);
  req.expected_axes = expected_profile_axes(st_.roofline);
  KOPT_TRY_ASSIGN(auto r, lab_.profile(req, plan_, o_.ncu_num));
  st_.profile_plan = profile::to_json(plan_);
  std::map<std::string, double> metrics;
  for (const auto& [k, v] : r.aggregate.metrics)
    if (v.value) metrics[k] = pipeline::ncu_to_base_units(*v.value, v.unit);
  const std::string summary = profile::format_summary(r, o_.ncu_num);
  KOPT_TRY(util::write_file_atomic(out_dir / (name + "_summary.txt"), summary));
  if (!key.empty()) {
    // Under the key of the plan it started from, the plan it ended with (an adaptive first profile fixes it).
    std::error_code ec;
    fs::create_directories(*cache, ec);
    std::time_t now = std::time(nullptr);
    char made[32];
    std::strftime(made, sizeof made, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    if (auto st = util::write_file_atomic(*cache / (key + ".json"),
                                          util::Json{{"metrics", metrics}, {"summary", summary}, {"plan", profile::to_json(plan_)},
                                                     {"report", profile::to_json(r)}, {"made", made}, {"run_dir", dir_.string()}}
                                              .dump(1));
        !st)
      say("  the profile was not cached: {}", st.error().message);
  }
  return metrics;
}

Result<roofline::RooflineResult> Optimizer::place(const runner::TimingStats& t, const fs::path& out_dir, const std::string& label) {
  roofline::AnalyzeOptions ao;
  ao.near_peak_efficiency = o_.near_peak_efficiency;
  ao.budget.total = o_.budget_total;
  ao.budget.max_per_axis = o_.budget_per_axis;
  KOPT_TRY_ASSIGN(auto r, pipeline::place(*ceilings_, prep_.manifest, prep_.buffer_dtypes, t, st_.metrics, label, ao));
  st_.roofline = roofline::to_json(r);
  KOPT_TRY(write_json(out_dir / "roofline.json", "roofline", st_.roofline));
  std::vector<roofline::SvgPoint> pts;
  if (auto pt = roofline::svg_point(r)) pts.push_back(*pt);
  KOPT_TRY(util::write_file_atomic(out_dir / "roofline.svg", roofline::render_svg(*ceilings_, pts)));
  return r;
}

std::map<Axis, int> Optimizer::budget_from_roofline() const {
  std::map<Axis, int> slots;
  for (Axis a : kAllAxes) slots[a] = 0;
  if (st_.roofline.contains("budget") && st_.roofline["budget"].contains("methods"))
    for (Axis a : kAllAxes) slots[a] = st_.roofline["budget"]["methods"].value(std::string(axis_name(a)), 0);
  return slots;
}

void Optimizer::profile_champion(const fs::path& iter_dir) {
  if (!st_.champion) return;
  if (st_.last_profile.is_object() && st_.last_profile.value("candidate", std::string()) == st_.champion->candidate.id) return;
  std::error_code ec;
  fs::create_directories(iter_dir / "profile", ec);
  auto metrics = profile(fs::path(st_.champion->library), &st_.champion->candidate, iter_dir / "profile", "champion");
  if (!metrics) {
    say("  profile failed: {} (keeping the previous metrics)", metrics.error().message);
    return;
  }
  st_.metrics = *metrics;
  st_.last_profile = {{"methods", st_.champion->candidate.methods}, {"median_ms", st_.champion->median_ms},
                      {"candidate", st_.champion->candidate.id}};
}

void Optimizer::profile_deferred_baseline() {
  if (!st_.gate_records.contains("baseline_profile_deferred")) return;
  auto& rec = st_.gate_records["baseline_profile_deferred"];
  // Only --baseline-profile after (a record made before that value existed, without the key, meant it).
  if (!rec.is_object() || rec.value("taken", false) || !rec.value("after_search", true) || util::interrupted()) return;
  // The page's baseline column (report/run_data.cpp reads iter_00_baseline/profile). The search's evidence stays the
  // champion's: st_.metrics is not touched. A failure here costs the page its baseline column, not the run.
  const fs::path out = dir_ / "iter_00_baseline" / "profile";
  std::error_code ec;
  fs::create_directories(out, ec);
  auto metrics = profile(prep_.build.library, nullptr, out, "baseline");
  rec["taken"] = metrics.ok();
  if (!metrics) {
    rec["error"] = metrics.error().message;
    say("  the baseline's profile failed: {} (the page shows no baseline profile)", metrics.error().message);
  }
}

}  // namespace kopt::loop
