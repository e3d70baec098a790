#pragma once
// What one measurement of a candidate came to: a status (one enum, one description table) and its evidence.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/stats.h"
#include "util/json_io.h"

namespace kopt::runner {

enum class RunStatus {
  kOk,               // correct on every seed (and timed, in time mode)
  kWrongResult,      // an output differs from the reference beyond tolerance
  kUnwrittenOutput,  // an output kept the poison pattern: the kernel never wrote it
  kInputModified,    // an input buffer changed during the call
  // The evidence rules of docs/GATES.md "Evidence that cannot be gamed" (issue 40):
  kWrongOnFreshInputs,         // right on the checked seeds, wrong on a timed call with inputs it had not seen
  kWrongOnSealedSeed,          // wrong on the sealed seed, whose expected outputs are out of its reach (runner/sealed.h)
  kWrongOnEphemeralSeed,       // wrong on the ephemeral seed, never written to any file (contract/ephemeral_seed.h)
  kOutputsChangedAfterReturn,  // two looks at one call's outputs, both after solve() returned, disagree
  kThreadsLeftRunning,         // solve() (or loading its library) left host threads running
  kCudaError,                  // a CUDA error (illegal address, launch failure, ...) during the call
  kCrashed,                    // the child died from a signal (segfault, abort, ...)
  kTimedOut,                   // the child did not finish in time and was killed
  kLoadError,                  // the library or its solve() could not be loaded, or golden data was unreadable
  kInterrupted,                // kopt was interrupted
  kInternal                    // anything else
};
std::string_view describe(RunStatus s);
std::string_view status_name(RunStatus s);  // snake_case, for JSON
std::optional<RunStatus> parse_status(std::string_view name);
bool is_correct(RunStatus s);  // kOk

struct RunOutcome {
  RunStatus status = RunStatus::kInternal;
  std::string message;               // human-readable reason, e.g. the first bad index with both values
  util::Json details;                // the child's full result.json (per-seed comparisons, samples, ...)
  // Time mode, when correct. Every statistic is computed here (runner::interpret) from the child's raw samples,
  // whatever the backend: `timing` of the GPU time (the ranking figure; launch excluded when timing_method
  // says so), `call` of the host-observed time per call, launch included.
  std::optional<TimingStats> timing;
  std::optional<TimingStats> call;
  std::vector<double> samples_ms;       // raw GPU samples
  std::vector<double> call_samples_ms;  // raw call samples
  std::string timing_method;            // runner/timing_method.h's name; "" when not timed
  double wall_ms = 0;                // the child's wall time, process start included
};

util::Json to_json(const RunOutcome& o);

// The other cases a Triton timed run checked in its child (RunRequest::also_check, the result's "cases"): each case's
// golden folder (as the child wrote it), status and message, in the order checked; the child stops at the first
// case that is not right. Empty when the result holds none; an entry whose status is not a known one is kInternal.
struct CaseCheckResult {
  std::string golden;
  RunStatus status = RunStatus::kInternal;
  std::string message;
};
std::vector<CaseCheckResult> case_checks_in(const util::Json& details);

}  // namespace kopt::runner
