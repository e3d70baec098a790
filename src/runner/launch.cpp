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

std::string_view run_mode_name(RunMode m) {
  switch (m) {
    case RunMode::kCheck: return "check";
    case RunMode::kTime: return "time";
    case RunMode::kPaired: return "paired";
    case RunMode::kProfile: return "profile";
    case RunMode::kCompile: return "compile";
  }
  return "check";
}

std::optional<RunMode> parse_run_mode(std::string_view name) {
  for (RunMode m : {RunMode::kCheck, RunMode::kTime, RunMode::kPaired, RunMode::kProfile, RunMode::kCompile})
    if (run_mode_name(m) == name) return m;
  return std::nullopt;
}

std::vector<std::string> child_argv(const RunRequest& req, const std::string& kopt_exe) {
  std::string exe = kopt_exe.empty() ? (util::executable_dir() / "kopt").string() : kopt_exe;
  if (!req.triton_kernel.empty()) {
    const char* pp = std::getenv("PYTHONPATH");
    return triton_child_argv(req, toolchain::find_python(), toolchain::python_harness_dir(), pp ? pp : "", exe);
  }
  std::vector<std::string> argv = {exe, "__runner"};
  for (const auto& l : req.libs) {
    argv.push_back("--lib");
    argv.push_back(l.string());
  }
  argv.insert(argv.end(), {"--golden", req.golden_dir.string(), "--out", req.result_json.string(), "--mode", std::string(run_mode_name(req.mode)),
                           "--max-time-s", fmt::format("{:.17g}", req.max_time_s), "--target-ci", fmt::format("{:.17g}", req.target_ci),
                           "--min-samples", std::to_string(req.min_samples), "--rounds", std::to_string(req.rounds)});
  if (req.race) argv.push_back("--race");
  if (req.checked_first) argv.push_back("--checked-first");
  if (req.tol) {
    argv.insert(argv.end(), {"--atol", fmt::format("{:.17g}", req.tol->atol), "--rtol", fmt::format("{:.17g}", req.tol->rtol)});
  }
  if (req.l2 != L2Mode::kCold) argv.insert(argv.end(), {"--l2", std::string(l2_name(req.l2))});
  if (req.timing_method) argv.insert(argv.end(), {"--timing-method", std::string(method_name(*req.timing_method))});
  if (!req.dump_outputs.empty()) argv.insert(argv.end(), {"--dump-outputs", req.dump_outputs.string()});
  if (!req.smem_fill.empty()) argv.insert(argv.end(), {"--smem-fill", req.smem_fill});
  if (req.max_seeds > 0) argv.insert(argv.end(), {"--max-seeds", std::to_string(req.max_seeds)});
  if (req.ephemeral_fd >= 0) argv.insert(argv.end(), {"--ephemeral-fd", std::to_string(req.ephemeral_fd)});
  return argv;
}

namespace {

std::vector<double> samples_of(const util::Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return {};
  std::vector<double> v;
  for (const auto& x : j[key])
    if (x.is_number()) v.push_back(x.get<double>());
  return v;
}

}  // namespace

void fill_timing(RunOutcome& o) {
  util::Json& d = o.details;
  o.samples_ms = samples_of(d, "samples_ms");
  o.call_samples_ms = samples_of(d, "call_samples_ms");
  if (!o.samples_ms.empty()) {
    o.timing = compute_stats(o.samples_ms);
    d["timing"] = to_json(*o.timing);
  }
  if (!o.call_samples_ms.empty()) {
    o.call = compute_stats(o.call_samples_ms);
    d["call"] = to_json(*o.call);
  }
  if (d.contains("timing_method") && d["timing_method"].is_string()) {
    o.timing_method = d["timing_method"].get<std::string>();
  } else if (d.contains("timing_info") && d["timing_info"].is_object()) {
    o.timing_method = d["timing_info"].value("timing_method", std::string());
  }
  if (d.contains("libs") && d["libs"].is_array())
    for (auto& lib : d["libs"]) {
      auto v = samples_of(lib, "samples_ms");
      if (!v.empty()) lib["timing"] = to_json(compute_stats(v));
    }
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
    if (o.status == RunStatus::kOk) fill_timing(o);
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

bool lost_worker(const RunOutcome& o) {
  const bool no_result = !o.details.is_object() || !o.details.contains("status");
  return no_result && (o.status == RunStatus::kCrashed || o.status == RunStatus::kInternal);
}

RunOutcome run_candidate(const RunRequest& req, util::CommandRunner& runner) {
  std::error_code ec;
  std::filesystem::remove(req.result_json, ec);
  util::ProcessSpec spec{child_argv(req)};
  spec.timeout_s = req.timeout_s;
  spec.env = req.env;
  if (req.ephemeral_fd >= 0) spec.pass_fds = {req.ephemeral_fd};  // this child alone inherits it
  auto proc = runner.run(spec);
  std::optional<util::Json> result;
  if (std::filesystem::exists(req.result_json, ec)) {
    auto j = util::read_json(req.result_json);
    if (j) result = std::move(j).value();
  }
  return interpret(proc, result);
}

}  // namespace kopt::runner
