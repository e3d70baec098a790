#pragma once
// The sanitizer gate (issue 18): compute-sanitizer's memcheck, racecheck, synccheck and initcheck run on the
// measuring child (`kopt __runner --mode check` at a small case) through the CommandRunner seam; their reports
// (parse.h) decide whether a candidate may become champion, and give the run's `race_safe` state.
//
// Each tool runs as
//   compute-sanitizer --tool T --print-limit 100 --error-exitcode 99 --show-backtrace no <target argv>
// racecheck in its default analysis mode: one record per racing pair of accesses, both lines and the hazard
// count ("Race reported between Write access at f+0xf0 in k.cu:12 and Read access at ... [4000 hazards]"). With
// `--racecheck-report all` or `hazard` the print limit fills with warning-level (warp-level) hazard records and
// the error-level ones go undisplayed (tests/data/sanitize/README.md); the summary's error count is trusted too.
// The gate rejects on the findings parse.h's
// table marks as rejecting (an out-of-bounds or misaligned access, a device exception, a race at error level, a
// barrier error); uninitialised reads, API errors and leaks are reported only. A tool that could not run or did
// not finish (no summary line, a timeout) decides nothing: the state it informs stays unknown.
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "core/result.h"
#include "sanitize/parse.h"
#include "util/json_io.h"
#include "util/process.h"
#include "workload/working_set.h"

namespace kopt::sanitize {

// --sanitize finalists|all|off (default finalists): who is sanitized.
enum class Policy { kFinalists, kAll, kOff };
std::string_view policy_name(Policy p);
std::optional<Policy> parse_policy(std::string_view name);

enum class Role { kBaseline, kCandidate, kFinalist };
// off: nobody; finalists: the baseline (once, before the search) and each finalist before it can become
// champion; all: every candidate that passed its check too.
bool should_sanitize(Policy p, Role r);

// race_safe in the run's JSON: safe (racecheck ran to its end with no race at error level), unsafe (it found
// one), unknown (not run, tool missing, timed out or unfinished).
enum class RaceSafe { kSafe, kUnsafe, kUnknown };
std::string_view race_safe_name(RaceSafe s);
// The name back (race_safe_name's inverse); anything else is unknown.
RaceSafe parse_race_safe(std::string_view name);

enum class RunOutcome { kClean, kFindings, kToolError, kTimedOut };
std::string_view outcome_name(RunOutcome o);

struct ToolRun {
  Tool tool = Tool::kMemcheck;
  RunOutcome outcome = RunOutcome::kToolError;
  Report report;
  std::string message;  // the tool error, or the tail of its output when it did not finish
  int exit_code = -1;
  double wall_ms = 0;
};

// The argv (pure). `sanitizer` is the compute-sanitizer path (toolchain::find_compute_sanitizer()).
std::vector<std::string> sanitizer_argv(const std::string& sanitizer, Tool tool, const std::vector<std::string>& target_argv);
// Interprets a finished compute-sanitizer process (pure).
ToolRun interpret(Tool tool, const util::ProcessResult& proc);
ToolRun run_tool(const std::string& sanitizer, Tool tool, const std::vector<std::string>& target_argv, double timeout_s,
                 util::CommandRunner& runner);

// ---- Shared memory nobody wrote (runner/smem_fill.h) ------------------------------------------------------
// No compute-sanitizer tool tracks shared-memory initialisation (initcheck covers global memory). So the gate runs
// the check child once more, outside compute-sanitizer, with every SM's shared memory filled with 0xFF bytes (a
// float NaN, an integer -1) before each call: a kernel that reads shared memory nobody wrote reads that, and a
// kernel that passed its check without the fill and fails it with the fill has done so.
inline constexpr const char* kFillPattern = "0xffffffff";
enum class FillOutcome { kSkipped, kClean, kWrong, kError };
std::string_view fill_outcome_name(FillOutcome o);  // "skipped", "clean", "wrong", "error"
struct FillRun {
  FillOutcome outcome = FillOutcome::kSkipped;
  std::string status;   // the check child's status ("ok", "wrong_result", "unwritten_output", ...)
  std::string message;  // its message, or why the run decided nothing
  double wall_ms = 0;
};
// The child's result file read after it finished (pure): ok: clean; a wrong or never-written output: wrong; any
// other end (a crash, a CUDA error, no result): error, which decides nothing.
FillRun interpret_fill(const util::ProcessResult& proc, const std::optional<util::Json>& result);

struct Verdict {
  bool rejected = false;
  std::string reason;                 // the first rejecting finding(s), e.g. "racecheck: shared-memory race ..."
  std::vector<std::string> reported;  // non-rejecting findings, one line each
  RaceSafe race_safe = RaceSafe::kUnknown;
  std::vector<ToolRun> runs;
  FillRun fill;                       // the shared-memory fill's run (skipped: Triton, or no fill asked)
  // Non-empty: this verdict was read from the sanitizer cache (verdict_cache.h), not run now: which entry, when and by
  // which run it was made.
  std::string from_cache;
  bool complete() const;              // every tool ran to its end
};
Verdict judge(std::vector<ToolRun> runs);  // pure
// Folds the fill's run into the verdict (pure): wrong rejects, naming the outputs; error is reported.
void add_fill(Verdict& v, FillRun fill);
RaceSafe race_safety(const std::vector<ToolRun>& runs);

struct Request {
  std::string sanitizer;                    // empty: the gate is skipped (unknown), not failed
  std::vector<std::string> target_argv;     // runner::child_argv(...) for mode "check" at the small case
  std::vector<Tool> tools = {Tool::kMemcheck, Tool::kRacecheck, Tool::kSynccheck, Tool::kInitcheck};
  double timeout_s = 600;                   // per tool
  // The shared-memory fill: the check child's argv with `--smem-fill kFillPattern` and its own result file.
  // Empty: no fill (Triton kernels, whose runner has no such pass).
  std::vector<std::string> fill_argv;
  std::string fill_result;
  // The tools (and the fill) run at once, each child with its own result file (`--out` gets the tool's name):
  // nothing is timed while the gate runs, and four sequential compute-sanitizer processes were most of a new
  // champion's selection wall at sgemm 4096^3 on the H200. Off for runners that are not thread-safe (test fakes).
  bool concurrent = false;
};
Verdict run_gate(const Request& req, util::CommandRunner& runner);

util::Json to_json(const ToolRun& r);
util::Json to_json(const Verdict& v);
// to_json's verdict read back: what decides (rejected, reason, reported, race_safe, the fill) and each tool's outcome and
// summary counts; the tools' findings themselves are not (they are in the JSON it was read from).
Result<Verdict> verdict_from_json(const util::Json& j);

// ---- The small case -------------------------------------------------------------------------------------
// Sanitizing slows a kernel 10-100x (racecheck most): the gate runs at the user's dims fitted to this working
// set (workload::fit_to_limit: the matrix's axes and rounding, so the alignment is kept). 4 MiB since 2026-12-01:
// at 16 MiB racecheck took 8.8 s of a new champion's 10 s gate on the H200 (sgemm_tunable from 4096^3; the other
// tools about 1 s each, mostly their start); what the tools look for is per block and per access (out of bounds,
// shared-memory hazards, barriers, uninitialised reads), and 4 MiB still runs interior and edge blocks.
inline constexpr int64_t kSanitizeWorkingSetBytes = 4ll << 20;
Result<Dims> sanitize_dims(const workload::WorkingSetModel& model, const Dims& user,
                                int64_t max_bytes = kSanitizeWorkingSetBytes);
// Per tool: 120 s plus 100x the child's own check wall time at that case, at most 1800 s.
double sanitize_timeout_s(double check_wall_ms);

}  // namespace kopt::sanitize
