#pragma once
// `kopt optimize`: the gates, the branch-and-select loop, ablation, the run directory and its summary.
#include <filesystem>
#include <optional>
#include <string>

#include "loop/gate_options.h"
#include "pipeline/prepare.h"

namespace kopt::loop {

struct OptimizeOptions {
  pipeline::KernelJob job;
  int iterations = 3;        // a maximum
  int branches = 4;          // candidates per iteration (K)
  int ncu_num = 5;           // top Nsight Compute metrics per axis
  int finalists = 2;         // re-timed in paired rounds against the incumbent
  int patience = 1;          // iterations without a significant gain before stopping
  int budget_total = 3, budget_per_axis = 2;
  double near_peak_efficiency = 0.80;  // floor / time at or above which the champion is near peak (docs/ROOFLINE.md)
  std::string generator = "builtin";  // or a command line
  double generator_timeout_s = 1800;
  double max_time_s = 2;     // timing budget per candidate (s)
  int paired_rounds = 30;
  std::filesystem::path out = ".";
  std::optional<std::filesystem::path> resume;
  bool quiet = false;
  bool print_json = false;
  uint64_t seed = 1;
  GateOptions gates;         // the workload matrix, shapes files, regressions, working set, sanitizer (issue 18)
};

// Returns the process exit code; everything it learns lands in the run directory.
int run_optimize(OptimizeOptions opts);

// The options a run directory was started with (options.json), for --resume.
util::Json options_to_json(const OptimizeOptions& o);
Result<OptimizeOptions> options_from_json(const util::Json& j);

}  // namespace kopt::loop
