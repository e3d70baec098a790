#pragma once
// The library entry point `kopt profile` and `kopt optimize` call: profile one solve() call with Nsight
// Compute, adaptively on the first call of a run, with the fixed plan afterwards.
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "profile/aggregate.h"
#include "profile/classify.h"
#include "profile/details_page.h"
#include "profile/plan.h"
#include "profile/rank.h"
#include "profile/raw_page.h"
#include "util/process.h"

namespace kopt::profile {

struct ProfileRequest {
  // The runner child (`kopt __runner ... --mode profile`): it calls cuProfilerStart() right before one
  // solve() and cuProfilerStop() after it, so only that call's kernels are profiled.
  std::vector<std::string> target_argv;
  std::filesystem::path out_dir;         // receives <name>.ncu-rep (kept: it opens in the GUI)
  std::string name = "profile";
  std::string ncu_path;                  // toolchain::find_ncu(); empty fails the gate
  std::string chip;                      // "gh100": requested metrics are checked with --query-metrics
  CacheControl cache_control = CacheControl::kAll;
  double pass1_timeout_s = 600;          // pass 1 (and a fixed-plan run) must finish within this
  double pass2_budget_s = 300;           // pass 2 beyond this is killed and a lighter set is tried
  std::map<std::string, std::string> env;
  // What `ncu --version` and `ncu --query-metrics --chip CHIP` print, where the caller knows it already (the lab keeps
  // both: toolchain::tool_output): not asked again. Empty: each is run (about 1 s and 0.5 s on the H200).
  std::string ncu_version_text, query_metrics_text;
  // The axes the caller expects pass 1 to find binding (the roofline's: a memory-bound kernel near its floor), or
  // none. A first call then collects pass 2's sections for them at once and keeps that report when pass 1's
  // classification, read from the same report, names exactly these axes: one ncu run instead of two, the same plan
  // and report. Otherwise that run stands as pass 1 and pass 2 runs as before.
  std::vector<Axis> expected_axes;
};

struct KernelProfile {
  KernelRecord record;
  std::optional<double> duration_ns;
  std::vector<RuleResult> rules;
  Classification classification;
};

struct MissingMetric {
  std::string name;
  std::string where;  // "query-metrics" (the chip does not list it) or "report" (requested, no value)
};

struct ProfileResult {
  std::string ncu_version;
  std::string cache_control;             // "all" / "none"
  std::filesystem::path report_path;     // the .ncu-rep the analysis comes from (kept: it opens in the GUI)
  std::filesystem::path json_path, summary_path;  // written by profile_call
  double profiling_wall_ms = 0;          // every ncu process of this call, imports included
  ProfilePlan plan;                      // the plan the report was collected with
  std::vector<KernelProfile> kernels;    // launch order
  Aggregate aggregate;
  Classification classification;         // of the whole call (time-weighted aggregate)
  std::array<std::vector<RankedMetric>, 3> top;  // indexed by Axis; at most top_n each
  int top_n = 5;
  std::vector<MissingMetric> missing;
  std::vector<std::string> notes;        // fallbacks taken, rule source, ...
  const std::vector<RankedMetric>& top_for(Axis a) const { return top[static_cast<size_t>(a)]; }
};

// Fills req.ncu_version_text and req.query_metrics_text (for req.chip) from toolchain::tool_output, which runs each
// once per ncu (path, size, modification time) and keeps what it printed. A run's early work calls it to have both
// ready before the first profile.
void add_known_ncu_outputs(ProfileRequest& req);

// Profiles the call. `plan` is the run's plan: when !plan.fixed this call runs pass 1, classifies, runs
// pass 2 within the budget (falling back to lighter sets) and fixes the plan; when plan.fixed it collects
// exactly plan.sections / plan.metrics once. Gate failures are Errors with exit code 3. Writes
// <out_dir>/<name>_metrics.json and <out_dir>/<name>_summary.txt.
Result<ProfileResult> profile_call(const ProfileRequest& req, ProfilePlan& plan, util::CommandRunner& runner,
                                   int top_n = 5);

// Builds the analysis from parsed pages (no processes): per-kernel classification, the aggregate, top-N
// per axis with rule messages, missing registry metrics of the plan's axes.
ProfileResult analyse(const RawPage& page, const std::vector<RuleResult>& rules, const ProfilePlan& plan, int top_n);

Pass1Evidence evidence_of(const std::function<std::optional<double>(const std::string&)>& lookup);

}  // namespace kopt::profile
