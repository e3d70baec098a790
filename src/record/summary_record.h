#pragma once
// summary.json (schema "kopt.summary/1") as a run record: what the loop writes when a run ends (loop/summary.cpp) and
// summary.md, summary.html, export and compare read (report/). Strict about types, tolerant of absence, as
// record/run_record.h. The sections other modules own (the gates' records, the case table, the held-out shapes, the
// results database's reuse, the warm start, the derivation, the language model's usage...) stay JSON in `sections`,
// keyed by their name in the file, as written (the page shows some whole); what summary.md reads of them is typed in
// `typed` (record/summary_sections.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "record/run_record.h"
#include "record/summary_sections.h"

namespace kopt::record {

struct Headline {
  std::optional<double> baseline_ms, champion_ms, speedup_vs_baseline, reference_ms, speedup_vs_reference;
  std::optional<std::string> champion_id, warning;
  bool operator==(const Headline&) const = default;
};

struct RooflineSummary {  // the champion's latest placement, in short
  std::optional<std::string> mode, verdict, bound;
  std::optional<bool> near_peak;
  std::optional<double> floor_ms, efficiency;
  bool empty() const { return *this == RooflineSummary{}; }
  bool operator==(const RooflineSummary&) const = default;
};

struct TimelineEntry {  // one iteration (0: the baseline's gates; a final verification's fallback adds one)
  std::optional<int64_t> iteration, candidates, correct;
  std::optional<std::string> champion_id, note;
  std::optional<double> champion_ms;
  std::optional<bool> improved;
  bool operator==(const TimelineEntry&) const = default;
};

struct FrontierEntry {  // a runner-up
  std::optional<std::string> id;
  std::optional<double> median_ms;
  std::optional<std::vector<std::string>> methods;
  bool operator==(const FrontierEntry&) const = default;
};

struct SummaryRecord {
  std::string schema;
  std::optional<std::string> kernel, dims, numerics_mode, generator;
  std::optional<std::string> meta_gpu, meta_time, meta_kopt_version;  // read from meta (kept whole in `sections`)
  std::optional<bool> sizes_guessed;  // absent: false
  std::optional<bool> gates_passed;   // absent: true (written since runs can stop at a gate)
  // stop: {reason, detail}; absent in a hand-made summary ("n/a"); reason "" (kNone): not finished.
  bool has_stop = false;
  std::optional<StopReason> stop_reason;
  std::optional<std::string> stop_detail;
  std::optional<Headline> headline;
  std::optional<RooflineSummary> roofline;
  std::optional<std::vector<TimelineEntry>> timeline;
  std::optional<std::map<std::string, std::vector<std::string>>> methods;  // verdict name -> "method (iteration N...)"
  std::optional<std::vector<FrontierEntry>> frontier;
  std::optional<Wall> wall;
  std::optional<std::map<std::string, double>> phase_seconds;
  std::optional<std::string> champion_path, run_dir;
  std::map<std::string, util::Json> sections;  // every other top-level field, as written
  // What summary.md reads of `sections`, typed: read with them (a wrong type is the summary's error), never written
  // (to_json writes `sections`).
  SummarySections typed;
  bool operator==(const SummaryRecord&) const = default;
};

util::Json to_json(const Headline& h);
util::Json to_json(const RooflineSummary& r);
util::Json to_json(const TimelineEntry& t);
util::Json to_json(const std::vector<TimelineEntry>& timeline);
util::Json to_json(const FrontierEntry& f);
util::Json to_json(const SummaryRecord& s);

Headline headline_from_json(const util::Json& j, const std::string& where = "headline");
RooflineSummary roofline_summary_from_json(const util::Json& j, const std::string& where = "roofline");
TimelineEntry timeline_entry_from_json(const util::Json& j, const std::string& where = "");
std::vector<TimelineEntry> timeline_from_json(const util::Json& j, const std::string& where = "timeline");
FrontierEntry frontier_entry_from_json(const util::Json& j, const std::string& where = "");
SummaryRecord summary_record_from_json(const util::Json& j);
// The document's schema ("kopt.summary/1"), before it is read as a summary; nullopt where it is not an object or its
// schema is not a string.
std::optional<std::string> summary_schema(const util::Json& j);

}  // namespace kopt::record
