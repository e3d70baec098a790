#pragma once
// One measured configuration as the results database keeps it (docs/DATABASE.md): the key that says what was
// measured, under which conditions, and what the measurement came to. Plain values; db/store.h reads and writes
// them, the commands that measure (optimize, bench) fill them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dims.h"
#include "util/json_io.h"

namespace kopt::db {

// Everything a measurement depends on. Two measurements with equal keys measured the same thing the same way; any
// field that differs gives another key_hash.
struct RecordKey {
  std::string kernel_hash;                   // util::content_hash of the kernel file the user gave
  util::Json config = util::Json::object();  // the configuration: {"params": {...}, "guards": {...}} (+ "source_hash")
  Dims dims;
  std::vector<std::string> dtypes;         // the buffers' dtypes in the signature's order
  std::string gpu_model;                   // "NVIDIA H200"
  std::string driver_version;              // "580.95.05"
  std::string nvcc_version;                // "13.0.88"
  std::vector<std::string> compile_flags;  // -arch, the job's flags and -D defines, the candidate's own flags, in order
  std::string timing_method;               // runner/timing_method.h's name
  std::string l2_mode;                     // "cold" | "warm"
  std::string measure_mode;                // "time" (one kernel timed) | "paired" (raced against the champion)
  std::string kopt_version;                // KOPT_VERSION
};

// The key as one JSON object (sorted keys, compact): the text key_hash is taken of.
std::string canonical_key(const RecordKey& k);
// util::Hasher (XXH3-128) of canonical_key: 32 hex characters.
std::string key_hash(const RecordKey& k);

// What the measurement concluded about the configuration.
enum class Verdict { kCorrect, kIncorrect, kCrashed, kTimedOut };
std::string_view verdict_name(Verdict v);  // snake_case, as stored
std::string_view describe(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view name);

// Which command measured it.
enum class Source { kOptimize, kBench };
std::string_view source_name(Source s);
std::optional<Source> parse_source(std::string_view name);

struct Record {
  int64_t id = 0;  // the row id; 0 until stored
  RecordKey key;
  std::string kernel_path;  // the kernel file as given (shown by `kopt db list`; not part of the key)
  Source source = Source::kOptimize;
  Verdict verdict = Verdict::kIncorrect;
  std::string run_status;  // the runner's status name (runner::status_name), the detail behind the verdict
  std::string note;        // why, when not correct
  std::optional<double> median_ms, ci95_low_ms, ci95_high_ms;
  std::vector<double> samples_ms;              // the raw samples (race rounds in paired mode)
  util::Json resources = util::Json::array();  // per function: name, registers, shared_bytes, spill_*_bytes
  int64_t recorded_unix_s = 0;                 // 0: Store::insert stamps the time
  std::string recorded_at;                     // ISO-8601 UTC, stamped with recorded_unix_s
  std::string run_dir;
  // A paired measurement's race against the champion of the moment (issue 39 item 2: what a later run reuses of it),
  // null otherwise: {"against": {"config": ..., "flags": [...]} (the opponent's configuration), "primary": the
  // comparison at the run's own dims, "over_cases": the combined comparison over the workload matrix (absent without
  // one), "objective_ratio": its weighted geometric mean ratio}; comparisons as runner::to_json(PairedComparison).
  util::Json raced = nullptr;
};

util::Json to_json(const Record& r);  // one record as `kopt db query/export` print it

// What one method came to in a champion of a past run (table method_outcomes, schema v3; issue 39 item 2(c), the
// strategy memory): the ablation's verdict on it, and where on the roofline the run stood when it chose that
// iteration's methods.
struct MethodOutcome {
  int64_t id = 0;
  std::string gpu_model;
  std::string kernel_hash;
  std::string run_dir;
  int iteration = 0;
  std::string position;  // the roofline position: the bound axis ("memory", "compute", "latency") or "unknown"
  std::string method;
  std::string verdict;   // search::verdict_name of the ablation's verdict
  // "paid" (effective, effective_measured: switching it off cost the champion time), "no_gain" (ineffective, or its
  // implementation failed), "adopted" (on in a crowned champion, its worth not measured: unverified, not ablatable).
  std::string outcome;
  std::optional<double> saved_fraction;  // the ablation's saving over the champion's median, when measured
  int64_t recorded_unix_s = 0;           // 0: Store stamps the time
  std::string recorded_at;
};

// A run's final champion (table champions, schema v4; issue 39): the record key (key_hash) it was measured under,
// marked once the run finished and the champion passed its final checks. Selection races an earlier run's champion
// first among its finalists, so among configurations equal within noise a second identical run crowns the same one.
struct ChampionMark {
  int64_t id = 0;
  std::string key_hash;     // db::key_hash of the champion's RecordKey (the loop's lookup key)
  std::string kernel_hash;  // the kernel's (a prune by kernel removes it)
  std::string run_dir;
  int64_t recorded_unix_s = 0;  // 0: Store stamps the time
  std::string recorded_at;
};

// A generator's proposals at one iteration of a run (table proposals, schema v5; issue 39), under the hash of what it
// proposed from less the noise in its figures (loop/proposals.h proposal_state_hash). A later run that reaches the
// same state (the same kernel key, options, champion, and configurations measured with the same verdicts) proposes the
// same configurations: a second identical run measures nothing the first had not.
struct ProposalMark {
  int64_t id = 0;
  std::string state_hash;
  std::string kernel_hash;  // the kernel's (a prune by kernel removes it)
  std::string run_dir;
  int iteration = 0;
  util::Json body;  // loop/proposals.h proposal_json
  int64_t recorded_unix_s = 0;  // 0: Store stamps the time
  std::string recorded_at;
};

}  // namespace kopt::db
