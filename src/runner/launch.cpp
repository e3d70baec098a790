#include "runner/launch.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

#include "runner/triton_child.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::runner {

std::vector<std::string> child_argv(const RunRequest& req, const std::string& kopt_exe) {
  if (!req.triton_kernel.empty()) {
    const char* pp = std::getenv("PYTHONPATH");
    return triton_child_argv(req, toolchain::find_python(), toolchain::python_harness_dir(), pp ? pp : "");
  }
  std::string exe = kopt_exe.empty() ? (util::executable_dir() / "kopt").string() : kopt_exe;
  std::vector<std::string> argv = {exe, "__runner"};
  for (const auto& l : req.libs) {
    argv.push_back("--lib");
    argv.push_back(l.string());
  }
  argv.insert(argv.end(), {"--golden", req.golden_dir.string(), "--out", req.result_json.string(), "--mode", req.mode,
                           "--max-time-s", fmt::format("{:.17g}", req.max_time_s), "--target-ci", fmt::format("{:.17g}", req.target_ci),
                           "--min-samples", std::to_string(req.min_samples), "--rounds", std::to_string(req.rounds)});
  if (req.race) argv.push_back("--race");
  if (req.tol) {
    argv.insert(argv.end(), {"--atol", fmt::format("{:.17g}", req.tol->atol), "--rtol", fmt::format("{:.17g}", req.tol->rtol)});
  }
  return argv;
}

RunOutcome interpret(const util::ProcessResult& proc, const std::optional<util::Json>& result) {
  RunOutcome o;
  o.wall_ms = proc.wall_ms;
  std::string tail = util::trim(proc.stderr_text);
  if (tail.size() > 600) tail = "..." + tail.substr(tail.size() - 600);
  if (proc.interrupted) {
    o.status = RunStatus::kInterrupted;
    o.message = "interrupted";
    return o;
  }
  if (proc.timed_out) {
    o.status = RunStatus::kTimedOut;
    o.message = "the kernel did not return in time; the measuring process was killed";
    return o;
  }
  if (result && result->contains("status")) {
    o.details = *result;
    auto st = parse_status(result->value("status", std::string()));
    o.status = st.value_or(RunStatus::kInternal);
    o.message = result->value("message", std::string());
    if (o.status == RunStatus::kOk && result->contains("timing")) {
      const auto& t = (*result)["timing"];
      TimingStats s;
      s.samples = t.value("samples", 0);
      s.median_ms = t.value("median_ms", 0.0);
      s.mean_ms = t.value("mean_ms", 0.0);
      s.min_ms = t.value("min_ms", 0.0);
      s.max_ms = t.value("max_ms", 0.0);
      s.p10_ms = t.value("p10_ms", 0.0);
      s.p90_ms = t.value("p90_ms", 0.0);
      s.mad_ms = t.value("mad_ms", 0.0);
      s.robust_cv = t.value("robust_cv", 0.0);
      s.ci95_low_ms = t.value("ci95_low_ms", 0.0);
      s.ci95_high_ms = t.value("ci95_high_ms", 0.0);
      s.ci95_rel_halfwidth = t.value("ci95_rel_halfwidth", 0.0);
      std::string stab = t.value("stability", std::string("unstable"));
      s.stability = stab == "stable" ? Stability::kStable : stab == "borderline" ? Stability::kBorderline : Stability::kUnstable;
      o.timing = s;
      if (result->contains("samples_ms")) o.samples_ms = (*result)["samples_ms"].get<std::vector<double>>();
    }
    if (proc.term_signal != 0) {  // wrote a result, then died (e.g. in teardown after a CUDA error)
      o.message += (o.message.empty() ? "" : "; ") + std::string("the process then died: ") + proc.describe();
    }
    return o;
  }
  if (proc.term_signal != 0) {
    o.status = RunStatus::kCrashed;
    o.message = "the measuring process was " + proc.describe() + (tail.empty() ? "" : ": " + tail);
    return o;
  }
  if (!proc.started) {
    o.status = RunStatus::kInternal;
    o.message = proc.describe();
    return o;
  }
  o.status = RunStatus::kCrashed;
  o.message = "the measuring process exited (" + proc.describe() + ") without a result" + (tail.empty() ? "" : ": " + tail);
  return o;
}

RunOutcome run_candidate(const RunRequest& req, util::CommandRunner& runner) {
  std::error_code ec;
  std::filesystem::remove(req.result_json, ec);
  util::ProcessSpec spec{child_argv(req)};
  spec.timeout_s = req.timeout_s;
  auto proc = runner.run(spec);
  std::optional<util::Json> result;
  if (std::filesystem::exists(req.result_json, ec)) {
    auto j = util::read_json(req.result_json);
    if (j) result = std::move(j).value();
  }
  return interpret(proc, result);
}

}  // namespace kopt::runner
