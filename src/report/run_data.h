#pragma once
// A run directory read into one JSON document (schema "kopt.report_data/1"): what summary.html embeds and
// renders, and what `kopt export` and `kopt compare` read. Missing parts become notes, never invented numbers.
//
// Read from RUN_DIR: state.json (the evaluation order, statuses), summary.json, options.json (dims, start time),
// env.json, ceilings.json, gates/timing*.json (the baseline's timing), iter_*/{plan,selection,ablation}.json,
// iter_*/roofline.json, iter_*/profile/*_metrics.json, iter_*/sass.json (the baseline's instruction mix, in
// iter_00_baseline), iter_*/[ablation/]candidates/ID/{candidate,build,run,sass}.json, champion/ (the champion's
// source and the baseline's beside it: their diff), holdout.json (through summary.json or state.json).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "record/options_record.h"
#include "record/run_record.h"
#include "util/json_io.h"

namespace kopt::report {

inline constexpr const char* kReportDataSchema = "kopt.report_data/1";

struct LoadOptions {
  bool samples = false;  // keep every candidate's timing samples (samples_ms): exports and compare need them, the page does not
};

// Errors (exit 4) only when RUN_DIR is not a directory, or has neither state.json nor summary.json, or
// state.json is not valid JSON.
Result<util::Json> load_run(const std::filesystem::path& run_dir, const LoadOptions& o = {});

// ---- load_run's document, typed: what `kopt export` and `kopt compare` read of it ---------------------------------

// One of its candidates (a row of the page's table).
struct CandidateRow {
  std::string id, role, status_text, reason, origin, content_hash, measured_at;
  std::optional<record::CandidateStatus> status;  // status_text's; none for "not_run" or a runner's status of an ablation build
  std::optional<int64_t> iteration, samples, registers;
  std::optional<double> median_ms, ci95_low_ms, ci95_high_ms, compile_ms;
  std::optional<std::vector<double>> samples_ms;  // with LoadOptions::samples
  std::map<std::string, int64_t> params;
  std::map<std::string, bool> guards;
  std::vector<std::string> flags, methods;
  bool ok() const { return status == record::CandidateStatus::kOk; }
  bool measured_ok() const { return ok() && median_ms.has_value(); }  // correct, with a median
};

struct RunFacts {  // its "run", and the champion
  std::string dir, kernel, dims_text, gpu, kopt_version, champion_id;
  util::Json dims = util::Json::object();  // options.json's dims, as written
};

// Throw record::RecordError naming the field ("candidates[3].median_ms: expected a number, found a string").
std::vector<CandidateRow> candidate_rows(const util::Json& run);
RunFacts run_facts(const util::Json& run);

// ---- pure pieces, exposed for tests -------------------------------------------------------------------------

// "2026-11-30T03:10:00Z" -> seconds since the epoch; nullopt when it is not that form.
std::optional<int64_t> parse_utc_iso(const std::string& s);

// Best-so-far over the candidates that have an "eval" index, in that order: one point per evaluation with
// {eval, time_s, id, status, median_ms (null unless ok), best_ms, best_id} (best_* null until one is ok).
util::Json convergence(const util::Json& candidates);

// Why a candidate is not the champion, in words (empty for the champion itself): its failure, its paired
// comparison's decision, or that it was not among the fastest (the finalists).
std::string candidate_reason(const util::Json& candidate, const std::string& champion_id);

// The first line of a compile log that names an error (nvcc's "file(12): error: ..."), else its last non-empty
// line; at most 240 characters.
std::string compile_error_line(const std::string& log);

// The instruction-mix classes summed over a sass.json's kernels ({"kernels": [{"function", "mix": {...}}]}).
util::Json summed_mix(const record::SassRecord& sass);

// The command that re-measures the champion, run from the run directory: `kopt bench` on the champion's file
// (`champion_file`, relative to the run directory; a CUDA champion's file carries its -D values, a Triton one's are
// given as -D) with the run's ref.py (`ref`, as it should be written), dims (--dim NAME=VALUE), --arch, nvcc flags (the
// run's and the champion's flag methods), include directories, the user's -D, numerics mode, tolerances, seeds and
// timing budget, from options.json (`options`, its record) and the champion's candidate record.
std::string reproduce_command(const record::OptionsRecord& options, const record::CandidateConfig& champion,
                              const std::string& champion_file, const std::string& ref);

// Every method the run's candidates tried that the champion does not have, with its figure: how many candidates
// tried it (and how many were correct), its fastest candidate and that one's time over the champion's, and the last
// ablation of it (what it saved on a champion that had it). `candidates`: load_run's rows; `ablation`: its ablation.
util::Json lost_methods(const util::Json& candidates, const util::Json& ablation, const std::string& champion_id);

}  // namespace kopt::report
