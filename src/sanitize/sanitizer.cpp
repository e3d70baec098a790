#include "sanitize/sanitizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "runner/outcome.h"
#include "util/strings.h"

namespace kopt::sanitize {

std::string_view policy_name(Policy p) {
  switch (p) {
    case Policy::kFinalists: return "finalists";
    case Policy::kAll: return "all";
    case Policy::kOff: return "off";
  }
  return "?";
}

RaceSafe parse_race_safe(std::string_view name) {
  for (auto v : {RaceSafe::kSafe, RaceSafe::kUnsafe})
    if (race_safe_name(v) == name) return v;
  return RaceSafe::kUnknown;
}

std::optional<Policy> parse_policy(std::string_view name) {
  for (Policy p : {Policy::kFinalists, Policy::kAll, Policy::kOff})
    if (policy_name(p) == name) return p;
  return std::nullopt;
}

bool should_sanitize(Policy p, Role r) {
  switch (p) {
    case Policy::kOff: return false;
    case Policy::kAll: return true;
    case Policy::kFinalists: return r == Role::kBaseline || r == Role::kFinalist;
  }
  return false;
}

std::string_view race_safe_name(RaceSafe s) {
  switch (s) {
    case RaceSafe::kSafe: return "safe";
    case RaceSafe::kUnsafe: return "unsafe";
    case RaceSafe::kUnknown: return "unknown";
  }
  return "?";
}

std::string_view outcome_name(RunOutcome o) {
  switch (o) {
    case RunOutcome::kClean: return "clean";
    case RunOutcome::kFindings: return "findings";
    case RunOutcome::kToolError: return "tool_error";
    case RunOutcome::kTimedOut: return "timed_out";
  }
  return "?";
}

std::vector<std::string> sanitizer_argv(const std::string& sanitizer, Tool tool, const std::vector<std::string>& target) {
  std::vector<std::string> argv = {sanitizer,         "--tool",       std::string(tool_name(tool)), "--print-limit", "100",
                                   "--error-exitcode", "99",          "--show-backtrace",           "no"};
  argv.insert(argv.end(), target.begin(), target.end());
  return argv;
}

ToolRun interpret(Tool tool, const util::ProcessResult& proc) {
  ToolRun r;
  r.tool = tool;
  r.exit_code = proc.exit_code;
  r.wall_ms = proc.wall_ms;
  r.report = parse_text(tool, proc.stdout_text + "\n" + proc.stderr_text);
  auto tail = [&] {
    std::string t = util::trim(proc.stdout_text + "\n" + proc.stderr_text);
    return t.size() > 600 ? "..." + t.substr(t.size() - 600) : t;
  };
  if (!proc.started) {
    r.outcome = RunOutcome::kToolError;
    r.message = "compute-sanitizer did not start: " + proc.start_error;
  } else if (proc.timed_out || proc.interrupted) {
    r.outcome = RunOutcome::kTimedOut;
    r.message = proc.interrupted ? "interrupted" : "compute-sanitizer " + std::string(tool_name(tool)) + " " + proc.describe();
  } else if (!r.report.finished()) {
    r.outcome = RunOutcome::kToolError;
    r.message = "compute-sanitizer " + std::string(tool_name(tool)) + " ended (" + proc.describe() + ") without its summary: " + tail();
  } else if (!r.report.findings.empty() || r.report.error_summary.value_or(0) > 0 || r.report.race_hazards.value_or(0) > 0) {
    r.outcome = RunOutcome::kFindings;
  } else {
    r.outcome = RunOutcome::kClean;
  }
  return r;
}

ToolRun run_tool(const std::string& sanitizer, Tool tool, const std::vector<std::string>& target, double timeout_s,
                 util::CommandRunner& runner) {
  util::ProcessSpec spec{sanitizer_argv(sanitizer, tool, target)};
  spec.timeout_s = timeout_s;
  spec.max_output_bytes = 8u << 20;
  // The runner's own compare kernels (checks on the GPU, docs/RUNNER.md) stay out of what the tool watches: the
  // child checks on the host, so every kernel the tool reports is the candidate's.
  spec.env["KOPT_GOLDEN_GPU_MB"] = "0";
  return interpret(tool, runner.run(spec));
}

bool Verdict::complete() const {
  return !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const ToolRun& r) {
    return r.outcome == RunOutcome::kClean || r.outcome == RunOutcome::kFindings;
  });
}

RaceSafe race_safety(const std::vector<ToolRun>& runs) {
  RaceSafe s = RaceSafe::kUnknown;
  for (const auto& r : runs) {
    if (r.tool != Tool::kRacecheck) continue;
    if (r.outcome != RunOutcome::kClean && r.outcome != RunOutcome::kFindings) continue;
    bool race = std::any_of(r.report.findings.begin(), r.report.findings.end(),
                            [](const Finding& f) { return f.kind == FindingKind::kRaceHazard && !f.warning; }) ||
                r.report.race_errors.value_or(0) > 0;
    if (race) return RaceSafe::kUnsafe;
    s = RaceSafe::kSafe;
  }
  return s;
}

Verdict judge(std::vector<ToolRun> runs) {
  Verdict v;
  std::vector<std::string> rejecting;
  for (const auto& r : runs) {
    for (const auto& f : r.report.findings) (rejects(f.kind, f.warning) ? rejecting : v.reported).push_back(f.text());
    if (r.outcome == RunOutcome::kToolError || r.outcome == RunOutcome::kTimedOut) v.reported.push_back(r.message);
    // Error-level races the print limit kept from being displayed still count (the summary's numbers).
    const bool shown = std::any_of(r.report.findings.begin(), r.report.findings.end(),
                                   [](const Finding& f) { return f.kind == FindingKind::kRaceHazard && !f.warning; });
    if (r.tool == Tool::kRacecheck && !shown && r.report.race_errors.value_or(0) > 0)
      rejecting.push_back(fmt::format("racecheck: {} shared-memory race hazard(s) at error level (not displayed)", *r.report.race_errors));
  }
  v.race_safe = race_safety(runs);
  if (!rejecting.empty()) {
    v.rejected = true;
    v.reason = "compute-sanitizer: " + util::join(rejecting, "; ");
  }
  v.runs = std::move(runs);
  return v;
}

std::string_view fill_outcome_name(FillOutcome o) {
  switch (o) {
    case FillOutcome::kSkipped: return "skipped";
    case FillOutcome::kClean: return "clean";
    case FillOutcome::kWrong: return "wrong";
    case FillOutcome::kError: return "error";
  }
  return "?";
}

FillRun interpret_fill(const util::ProcessResult& proc, const std::optional<util::Json>& result) {
  FillRun f;
  f.wall_ms = proc.wall_ms;
  if (!result || !result->is_object() || !result->contains("status")) {
    f.outcome = FillOutcome::kError;
    f.message = proc.timed_out ? "the shared-memory fill run timed out" : "the shared-memory fill run left no result";
    return f;
  }
  f.status = result->value("status", std::string());
  f.message = result->value("message", std::string());
  const auto st = runner::parse_status(f.status);
  if (st == runner::RunStatus::kOk) f.outcome = FillOutcome::kClean;
  else if (st == runner::RunStatus::kWrongResult || st == runner::RunStatus::kUnwrittenOutput) f.outcome = FillOutcome::kWrong;
  else f.outcome = FillOutcome::kError;
  return f;
}

void add_fill(Verdict& v, FillRun fill) {
  if (fill.outcome == FillOutcome::kWrong) {
    const std::string why = fmt::format(
        "shared memory: wrong outputs when every SM's shared memory starts filled with {} ({}): the kernel reads "
        "shared memory it did not write (initcheck covers global memory only)",
        kFillPattern, fill.message);
    v.reason = v.rejected ? v.reason + "; " + why : why;
    v.rejected = true;
  } else if (fill.outcome == FillOutcome::kError) {
    v.reported.push_back("shared-memory fill decided nothing: " + (fill.message.empty() ? fill.status : fill.message));
  }
  v.fill = std::move(fill);
}

namespace {
// The child's argv with its result file renamed for one tool (concurrent runs must not share it).
std::vector<std::string> with_own_result(std::vector<std::string> argv, Tool t) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--out") {
      std::filesystem::path p(argv[i + 1]);
      argv[i + 1] = (p.parent_path() / (p.stem().string() + "_" + std::string(tool_name(t)) + p.extension().string())).string();
    }
  return argv;
}

FillRun run_fill(const Request& req, util::CommandRunner& runner) {
  std::error_code ec;
  std::filesystem::remove(req.fill_result, ec);  // never a stale result
  util::ProcessSpec spec{req.fill_argv};
  spec.timeout_s = req.timeout_s;
  auto proc = runner.run(spec);
  std::optional<util::Json> result;
  if (auto j = util::read_json(req.fill_result)) result = std::move(j).value();
  return interpret_fill(proc, result);
}
}  // namespace

Verdict run_gate(const Request& req, util::CommandRunner& runner) {
  std::vector<ToolRun> runs;
  std::optional<FillRun> fill;
  const bool want_fill = !req.fill_argv.empty();
  if (req.sanitizer.empty()) {
    for (Tool t : req.tools) {
      ToolRun r;
      r.tool = t;
      r.outcome = RunOutcome::kToolError;
      r.message = "compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, or set KOPT_COMPUTE_SANITIZER)";
      runs.push_back(std::move(r));
    }
  } else if (req.concurrent) {
    runs.resize(req.tools.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < req.tools.size(); ++i)
      threads.emplace_back([&, i] {
        runs[i] = run_tool(req.sanitizer, req.tools[i], with_own_result(req.target_argv, req.tools[i]), req.timeout_s, runner);
      });
    if (want_fill) threads.emplace_back([&] { fill = run_fill(req, runner); });
    for (auto& t : threads) t.join();
  } else {
    for (Tool t : req.tools) {
      runs.push_back(run_tool(req.sanitizer, t, req.target_argv, req.timeout_s, runner));
      if (util::interrupted()) break;
    }
  }
  // The fill needs no compute-sanitizer: it runs whether the tools could or not.
  Verdict v = judge(std::move(runs));
  if (want_fill && !fill && !util::interrupted()) fill = run_fill(req, runner);
  if (fill) add_fill(v, std::move(*fill));
  return v;
}

util::Json to_json(const ToolRun& r) {
  return {{"tool", tool_name(r.tool)}, {"outcome", outcome_name(r.outcome)}, {"message", r.message},
          {"exit_code", r.exit_code},  {"wall_ms", r.wall_ms},               {"report", to_json(r.report)}};
}

util::Json to_json(const Verdict& v) {
  util::Json runs = util::Json::array();
  for (const auto& r : v.runs) runs.push_back(to_json(r));
  // clang-format off
  util::Json j = {{"rejected", v.rejected}, {"reason", v.reason},     {"reported", v.reported},
                  {"race_safe", race_safe_name(v.race_safe)}, {"complete", v.complete()}, {"runs", runs},
                  {"smem_fill", {{"outcome", fill_outcome_name(v.fill.outcome)}, {"pattern", kFillPattern}, {"status", v.fill.status},
                                 {"message", v.fill.message}, {"wall_ms", v.fill.wall_ms}}}};
  // clang-format on
  if (!v.from_cache.empty()) j["from_cache"] = v.from_cache;
  return j;
}

namespace {
// outcome_name's and fill_outcome_name's inverses: anything else is the outcome that decides nothing.
RunOutcome parse_outcome(const std::string& name) {
  for (auto o : {RunOutcome::kClean, RunOutcome::kFindings, RunOutcome::kTimedOut})
    if (outcome_name(o) == name) return o;
  return RunOutcome::kToolError;
}
FillOutcome parse_fill_outcome(const std::string& name) {
  for (auto o : {FillOutcome::kClean, FillOutcome::kWrong, FillOutcome::kError})
    if (fill_outcome_name(o) == name) return o;
  return FillOutcome::kSkipped;
}
}  // namespace

Result<Verdict> verdict_from_json(const util::Json& j) {
  if (!j.is_object() || !j.contains("runs") || !j["runs"].is_array()) return input_error("a sanitizer verdict needs its runs");
  Verdict v;
  try {
    v.rejected = j.value("rejected", false);
    v.reason = j.value("reason", std::string());
    v.reported = j.value("reported", std::vector<std::string>{});
    v.race_safe = parse_race_safe(j.value("race_safe", std::string()));
    for (const auto& r : j["runs"]) {
      ToolRun t;
      auto tool = parse_tool(r.value("tool", std::string()));
      if (!tool) return input_error("a sanitizer verdict names an unknown tool: " + r.value("tool", std::string()));
      t.tool = *tool;
      t.outcome = parse_outcome(r.value("outcome", std::string()));
      t.message = r.value("message", std::string());
      t.exit_code = r.value("exit_code", -1);
      t.wall_ms = r.value("wall_ms", 0.0);
      t.report.tool = t.tool;
      if (const auto& rep = r.value("report", util::Json::object()); rep.is_object()) {
        auto count = [&](const char* k) {
          return rep.contains(k) && rep[k].is_number_integer() ? std::optional<int64_t>(rep[k].get<int64_t>()) : std::nullopt;
        };
        t.report.error_summary = count("error_summary");
        t.report.errors_not_printed = count("errors_not_printed");
        t.report.race_hazards = count("race_hazards");
        t.report.race_errors = count("race_errors");
        t.report.race_warnings = count("race_warnings");
        t.report.notes = rep.value("notes", std::vector<std::string>{});
      }
      v.runs.push_back(std::move(t));
    }
    if (const auto& f = j.value("smem_fill", util::Json::object()); f.is_object()) {
      v.fill.outcome = parse_fill_outcome(f.value("outcome", std::string()));
      v.fill.status = f.value("status", std::string());
      v.fill.message = f.value("message", std::string());
      v.fill.wall_ms = f.value("wall_ms", 0.0);
    }
    v.from_cache = j.value("from_cache", std::string());
  } catch (const util::Json::exception& e) {
    return input_error(std::string("a sanitizer verdict of the wrong shape: ") + e.what());
  }
  return v;
}

Result<Dims> sanitize_dims(const workload::WorkingSetModel& model, const Dims& user, int64_t max_bytes) {
  auto f = workload::fit_to_limit(model, user, max_bytes);
  if (f) return f->realised;
  // Cannot reach the small size (no dimension to shrink, or too large even at its smallest): the smallest the
  // matrix's rounding allows, which is still the user's alignment.
  return workload::scale_dims(user, workload::scaled_axes(user), 1e-9);
}

double sanitize_timeout_s(double check_wall_ms) { return std::clamp(120.0 + 100.0 * check_wall_ms / 1000.0, 120.0, 1800.0); }

}  // namespace kopt::sanitize
