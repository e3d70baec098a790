#pragma once
// The result of the runner's paired mode (`kopt __runner --mode paired --lib A --lib B ...`), as plain data.
// Each library is first loaded and checked once against the golden output on fresh poison; only the correct
// ones are timed, in interleaved rounds. A library that fails (load error, wrong result, a launch error the
// context survives) is reported in its own entry and the others are still timed. The overall status is the
// first failing library's (ok when all pass), so consumers that want every library correct (optimize's
// champion-vs-finalist comparison) only look at it.
#include <string>
#include <utility>
#include <vector>

#include "runner/clocked_samples.h"
#include "runner/outcome.h"
#include "util/json_io.h"

namespace kopt::runner {

// Its samples (clocked_samples.h): gpu_ms one per round, empty for a library that was not timed; in the JSON
// `samples_ms`, `event_samples_ms`.
struct PairedEntry : ClockedSamples {
  std::string lib;
  RunStatus status = RunStatus::kOk;
  std::string message;
  util::Json check = util::Json::object();  // the check's per-output and per-input comparisons
  util::Json timing_info = util::Json::object();  // its probe alone: probe_method, fallback_reason, medians
  bool probe_reused = false;  // its probe figures came from the worker's cache (a trusted champion: --checked-first)
};

// Indices of the libraries that passed their check, in order: the ones the rounds time.
std::vector<size_t> timed_libs(const std::vector<PairedEntry>& entries);

// The first failing library's status, its message prefixed with "library <k> (<path>): "; ok and "" when
// every library passed.
std::pair<RunStatus, std::string> paired_status(const std::vector<PairedEntry>& entries);

// The result's `libs` array: per library `lib`, `status`, `message`, `check`, `samples_ms` (empty when not
// timed) and, when timed, `timing` (runner/stats.h) and `timing_info` (what its probe alone decided; every
// library is timed with the result's one `timing_method`), `event_samples_ms` and `event_median_ms` (the event
// figures of the same samples), and on the kernel clock `busy_median_ms` and `kernels_per_call`. Index k is the
// k-th --lib; every library is on the result's one `gpu_clock`.
util::Json paired_libs_json(const std::vector<PairedEntry>& entries);

}  // namespace kopt::runner
