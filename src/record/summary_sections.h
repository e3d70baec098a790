#pragma once
// summary.json's sections that other modules of the loop write (the workload matrix's case table, the held-out shapes,
// the per-shape dispatch, the safety gates, the parameter ablations, the per-candidate costs, the results database's
// reuse, the warm start, the measuring slots, the derived search space) as summary.md reads them: typed, strict about
// types and tolerant of absence (record/run_record.h's rules). Each struct holds the fields the report reads; a field
// the report does not read is left to `SummaryRecord::sections`, which keeps every section whole, as written (the page
// shows some whole). Each struct's fields are named once, beside it (record/fields.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "record/fields.h"
#include "util/json_io.h"

namespace kopt::record {

// A struct with a field whose key is a C++ keyword ("case", "default"): its field list written out, as
// KOPT_RECORD_FIELDS would write it.
#define KOPT_RECORD_FIELDS_BY_KEY(Type, ...)          \
  template <class S, class F>                         \
  requires std::same_as<std::remove_const_t<S>, Type> \
  void each_field(S& s, F&& f) { __VA_ARGS__ }

// "timed_at": the case the headline's times are of, where it is not the user's dims.
struct TimedAt {
  std::optional<std::string> case_name, note;  // case_name: "case"
  std::optional<Dims> requested, realised;
  bool operator==(const TimedAt&) const = default;
};
KOPT_RECORD_FIELDS_BY_KEY(TimedAt, f("case", s.case_name); f("requested", s.requested); f("realised", s.realised);
                          f("note", s.note);)

// "cases": the workload matrix's case table (loop/multi_case.cpp's case_table_json).
struct CaseRow {
  std::optional<std::string> name, note, verdict;
  std::optional<Dims> requested, realised;
  bool fitted = false;
  double weight = 0;
  std::optional<double> baseline_ms, champion_ms, ratio, speedup, floor_ms, efficiency;
  std::optional<std::vector<double>> ratio_ci95;
  bool operator==(const CaseRow&) const = default;
};
KOPT_RECORD_FIELDS(CaseRow, name, requested, realised, fitted, weight, baseline_ms, champion_ms, ratio, speedup, floor_ms,
                   efficiency, note, ratio_ci95, verdict)
struct CaseGeomean {
  int cases = 0;
  std::optional<double> ratio, speedup;
  bool operator==(const CaseGeomean&) const = default;
};
KOPT_RECORD_FIELDS(CaseGeomean, cases, ratio, speedup)
struct CaseTable {
  std::optional<std::vector<CaseRow>> cases;
  std::optional<CaseGeomean> geomean;
  std::optional<std::vector<std::string>> dropped;  // the default matrix's cases outside the kernel's domain, and why
  bool operator==(const CaseTable&) const = default;
};
KOPT_RECORD_FIELDS(CaseTable, cases, geomean, dropped)

// "holdout": the held-out shapes (loop/holdout.cpp's HoldoutSummary).
struct HoldoutCaseText {
  std::optional<std::string> text, verdict;
  bool operator==(const HoldoutCaseText&) const = default;
};
KOPT_RECORD_FIELDS(HoldoutCaseText, verdict, text)
struct HoldoutSection {
  int passed = 0, outside_domain = 0, champion_fails = 0, not_run = 0;
  std::string warning, note;
  std::optional<std::vector<HoldoutCaseText>> cases;
  bool operator==(const HoldoutSection&) const = default;
};
KOPT_RECORD_FIELDS(HoldoutSection, passed, outside_domain, champion_fails, not_run, warning, note, cases)

// "dispatch": the per-shape dispatch (--dispatch; loop/per_shape_loop.cpp, per_shape_steps.cpp).
struct DispatchBucketRecord {
  std::optional<std::string> config;
  std::vector<std::string> cases;
  bool operator==(const DispatchBucketRecord&) const = default;
};
KOPT_RECORD_FIELDS(DispatchBucketRecord, config, cases)
struct DispatchPlanRecord {
  std::vector<std::string> keys;
  std::optional<std::string> rule;
  std::vector<DispatchBucketRecord> buckets;
  bool operator==(const DispatchPlanRecord&) const = default;
};
KOPT_RECORD_FIELDS(DispatchPlanRecord, keys, rule, buckets)
struct DispatchCaseRow {
  std::optional<std::string> case_name, config, status;  // case_name: "case"; status: a case not timed
  std::optional<Dims> point;
  std::optional<double> dispatch_ms, champion_ms, ratio, speedup;
  std::optional<std::vector<double>> ratio_ci95;
  bool operator==(const DispatchCaseRow&) const = default;
};
KOPT_RECORD_FIELDS_BY_KEY(DispatchCaseRow, f("case", s.case_name); f("point", s.point); f("config", s.config);
                          f("dispatch_ms", s.dispatch_ms); f("champion_ms", s.champion_ms); f("ratio", s.ratio);
                          f("ratio_ci95", s.ratio_ci95); f("speedup", s.speedup); f("status", s.status);)
struct DispatchOverall {
  bool valid = false;
  std::optional<double> geomean_ratio;
  double ci95_low = 0, ci95_high = 0;
  std::optional<std::string> verdict;
  bool operator==(const DispatchOverall&) const = default;
};
KOPT_RECORD_FIELDS(DispatchOverall, valid, geomean_ratio, ci95_low, ci95_high, verdict)
struct DispatchCheck {
  std::string kind;  // "case" or "holdout"
  bool operator==(const DispatchCheck&) const = default;
};
KOPT_RECORD_FIELDS(DispatchCheck, kind)
struct DispatchSection {
  bool emitted = false;
  std::optional<std::string> reason;
  std::optional<DispatchPlanRecord> plan;
  std::vector<util::Json> configs;  // each configuration's library and source, counted by the summary
  std::vector<DispatchCaseRow> cases;
  std::optional<DispatchOverall> overall;
  std::vector<DispatchCheck> checks;
  bool operator==(const DispatchSection&) const = default;
};
KOPT_RECORD_FIELDS(DispatchSection, emitted, reason, plan, configs, cases, overall, checks)

// "gates": the safety gates' options and records (loop/summary.cpp's gates_json).
struct SanitizerRecord {  // baseline_sanitizer
  std::optional<std::string> race_safe, reason;
  bool rejected = false;
  bool operator==(const SanitizerRecord&) const = default;
};
KOPT_RECORD_FIELDS(SanitizerRecord, race_safe, rejected, reason)
struct GateEntry {  // one of rejected[], determinism[], ephemeral_seed[], final_verification[]
  std::optional<std::string> candidate, gate, verdict, reason, fallback;
  bool operator==(const GateEntry&) const = default;
};
KOPT_RECORD_FIELDS(GateEntry, candidate, gate, verdict, reason, fallback)
struct FlaggedEntry {  // flagged[]: a finalist slower at some case (issue 18)
  std::optional<std::string> candidate;
  std::vector<std::string> regressions;
  bool rejected = false;  // --no-regressions
  bool operator==(const FlaggedEntry&) const = default;
};
KOPT_RECORD_FIELDS(FlaggedEntry, candidate, regressions, rejected)
struct GatesSection {
  std::optional<std::string> race_safe, sanitize, champion_gates;
  std::optional<bool> champion_verified;  // absent: the champion is the baseline
  std::optional<SanitizerRecord> baseline_sanitizer;
  std::optional<std::vector<GateEntry>> rejected, determinism, ephemeral_seed, final_verification;
  std::optional<std::vector<FlaggedEntry>> flagged;
  bool operator==(const GatesSection&) const = default;
};
KOPT_RECORD_FIELDS(GatesSection, race_safe, sanitize, champion_gates, champion_verified, baseline_sanitizer, rejected, flagged,
                   determinism, ephemeral_seed, final_verification)

// "param_ablations" (and ablation.json's params): each parameter change reverted alone (record/run_record.h).
KOPT_RECORD_FIELDS(SavedMs, median, ci95_low, ci95_high)
KOPT_RECORD_FIELDS(ParamAblationRecord, iteration, champion_id, param, champion_value, baseline_value, variant_id, effect,
                   effect_text, saved_ms, note, comparison)

// "candidate_costs": the per-candidate costs (loop/summary.cpp).
struct CostSplit {
  double compile = 0, sass = 0, measure = 0, cases = 0;
  std::optional<double> measure_all_cases;  // absent before it was written: measure's
  bool operator==(const CostSplit&) const = default;
};
KOPT_RECORD_FIELDS(CostSplit, compile, sass, measure, cases, measure_all_cases)
struct CandidateCosts {
  int candidates = 0;
  std::optional<CostSplit> median_ms, p90_ms;
  bool operator==(const CandidateCosts&) const = default;
};
KOPT_RECORD_FIELDS(CandidateCosts, candidates, median_ms, p90_ms)

// "reuse": what the results database stood for (issue 39).
struct ReuseRow {
  std::optional<std::string> id, status, run_dir, recorded_at;
  std::optional<int64_t> iteration, record_id;
  std::optional<double> median_ms;
  bool ablation = false;
  bool operator==(const ReuseRow&) const = default;
};
KOPT_RECORD_FIELDS(ReuseRow, id, iteration, status, ablation, median_ms, run_dir, recorded_at, record_id)
struct ReuseSection {
  int evaluations = 0, reused = 0;
  std::vector<std::string> raced_again;
  std::vector<ReuseRow> records;
  bool operator==(const ReuseSection&) const = default;
};
KOPT_RECORD_FIELDS(ReuseSection, evaluations, reused, raced_again, records)

// "warm_start": the other shapes' configurations that led the first design (issue 39).
struct WarmStartRow {
  std::optional<std::string> key, candidate_id, status_here;
  std::optional<Dims> from_dims;
  std::optional<int64_t> rank, record_id;
  std::optional<double> median_ms, median_ms_here;
  bool operator==(const WarmStartRow&) const = default;
};
KOPT_RECORD_FIELDS(WarmStartRow, key, from_dims, rank, median_ms, record_id, candidate_id, median_ms_here, status_here)
struct WarmStartSection {
  std::vector<WarmStartRow> points;
  bool operator==(const WarmStartSection&) const = default;
};
KOPT_RECORD_FIELDS(WarmStartSection, points)

// "measuring": the measuring slots (issue 21).
struct MeasuringSlot {
  std::optional<std::string> name;
  int runs = 0, lost = 0;
  double busy_s = 0;
  bool operator==(const MeasuringSlot&) const = default;
};
KOPT_RECORD_FIELDS(MeasuringSlot, name, runs, lost, busy_s)
struct RetriedEntry {
  bool lost = false;  // lost its worker again on the other GPU
  bool operator==(const RetriedEntry&) const = default;
};
KOPT_RECORD_FIELDS(RetriedEntry, lost)
struct MeasuringSection {
  double wall_s = 0;
  std::vector<MeasuringSlot> per_slot;
  std::vector<RetriedEntry> retried;
  bool operator==(const MeasuringSection&) const = default;
};
KOPT_RECORD_FIELDS(MeasuringSection, wall_s, per_slot, retried)

// "derived": the search space derived from a kernel without annotations (search/derive.cpp's to_json, the copy, the
// pruned points).
struct DerivedParamRow {
  std::optional<std::string> name, reason;
  std::vector<int64_t> values;
  int64_t default_value = 0;  // "default"
  bool operator==(const DerivedParamRow&) const = default;
};
KOPT_RECORD_FIELDS_BY_KEY(DerivedParamRow, f("name", s.name); f("values", s.values); f("default", s.default_value);
                          f("reason", s.reason);)
struct DerivedMethod {
  std::optional<std::string> id, reason;
  bool operator==(const DerivedMethod&) const = default;
};
KOPT_RECORD_FIELDS(DerivedMethod, id, reason)
struct DerivedConstraint {
  std::optional<std::string> expr, reason;
  bool operator==(const DerivedConstraint&) const = default;
};
KOPT_RECORD_FIELDS(DerivedConstraint, expr, reason)
struct PrunedPoint {
  std::optional<std::string> candidate, point, status, why;
  bool operator==(const PrunedPoint&) const = default;
};
KOPT_RECORD_FIELDS(PrunedPoint, candidate, point, status, why)
struct DerivedSection {
  std::optional<std::string> copy;
  std::vector<DerivedParamRow> params;
  std::vector<DerivedMethod> methods;
  std::vector<DerivedConstraint> constraints;
  std::vector<std::string> notes;
  std::vector<PrunedPoint> pruned;
  bool operator==(const DerivedSection&) const = default;
};
KOPT_RECORD_FIELDS(DerivedSection, copy, params, methods, constraints, notes, pruned)

// The sections, each where the summary has it; read from the summary's document by summary_record_from_json.
struct SummarySections {
  std::optional<TimedAt> timed_at;
  std::optional<CaseTable> cases;  // an older summary's bare array of rows: absent here (the page reads it as written)
  std::optional<HoldoutSection> holdout;
  std::optional<DispatchSection> dispatch;
  std::optional<GatesSection> gates;
  std::optional<std::vector<ParamAblationRecord>> param_ablations;
  std::optional<CandidateCosts> candidate_costs;
  std::optional<ReuseSection> reuse;
  std::optional<WarmStartSection> warm_start;
  std::optional<MeasuringSection> measuring;
  std::optional<DerivedSection> derived;
  bool operator==(const SummarySections&) const = default;
};
KOPT_RECORD_FIELDS(SummarySections, timed_at, cases, holdout, dispatch, gates, param_ablations, candidate_costs, reuse,
                   warm_start, measuring, derived)

}  // namespace kopt::record
