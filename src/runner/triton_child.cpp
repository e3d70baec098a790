#include "runner/triton_child.h"

#include <fmt/format.h>

namespace kopt::runner {

namespace {
// The shortest text that reads back as the same double (std::to_string keeps only 6 decimals, which turns
// an atol of 1e-8 into 0).
std::string number(double v) { return fmt::format("{}", v); }
}  // namespace

std::vector<std::string> triton_child_argv(const RunRequest& req, const std::string& python,
                                           const std::string& harness_dir, const std::string& pythonpath,
                                           const std::string& kopt_exe) {
  std::string path = harness_dir + (pythonpath.empty() ? "" : ":" + pythonpath);
  // Profiled runs start the harness themselves: ncu follows the processes it starts, not a fork server's child.
  const char* module = req.mode == RunMode::kProfile ? "kopt_harness" : "kopt_harness.fork_client";
  std::vector<std::string> argv = {"env", "PYTHONPATH=" + path, "PYTHONUNBUFFERED=1"};
  // The process that imports the kernel starts `KOPT_EXE __judge` and seals itself first (python/kopt_harness/sealed.py).
  if (!kopt_exe.empty()) argv.push_back("KOPT_EXE=" + kopt_exe);
  argv.insert(argv.end(), {python.empty() ? "python3" : python, "-m", module, "triton-run",
                           "--kernel", std::filesystem::absolute(req.triton_kernel).string(), "--out",
                           req.result_json.string(), "--mode", std::string(run_mode_name(req.mode))});
  if (req.mode == RunMode::kCompile) {
    argv.insert(argv.end(), {"--dims", req.triton_dims.dump()});
  } else {
    argv.insert(argv.end(), {"--golden", req.golden_dir.string()});
  }
  for (const auto& c : req.triton_configs) argv.insert(argv.end(), {"--config", c.dump()});
  argv.insert(argv.end(), {"--max-time-s", number(req.max_time_s), "--target-ci", number(req.target_ci),
                           "--min-samples", std::to_string(req.min_samples), "--rounds", std::to_string(req.rounds)});
  if (req.tol) argv.insert(argv.end(), {"--atol", number(req.tol->atol), "--rtol", number(req.tol->rtol)});
  if (req.l2 != L2Mode::kCold) argv.insert(argv.end(), {"--l2", std::string(l2_name(req.l2))});
  if (req.timing_method) argv.insert(argv.end(), {"--timing-method", std::string(method_name(*req.timing_method))});
  if (!req.dump_cubin_dir.empty()) argv.insert(argv.end(), {"--dump-cubin", req.dump_cubin_dir.string()});
  if (!req.triton_cache_dir.empty())
    argv.insert(argv.end(), {"--triton-cache", std::filesystem::absolute(req.triton_cache_dir).string()});
  if (req.ephemeral_fd >= 0) argv.insert(argv.end(), {"--ephemeral-fd", std::to_string(req.ephemeral_fd)});
  if (req.mode == RunMode::kTime)
    for (const auto& g : req.also_check) argv.insert(argv.end(), {"--also-check", g.string()});
  return argv;
}

}  // namespace kopt::runner
