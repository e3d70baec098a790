#pragma once
// The loop's decisions as pure functions over recorded measurements: which candidate becomes champion,
// what each method of the champion contributed, and when to stop. No I/O, so they are tested with recorded
// numbers and replayable without a GPU.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "record/stop_reason.h"
#include "runner/stats.h"
#include "sass/verify.h"
#include "search/generator.h"
#include "util/json_io.h"

namespace kopt::loop {

// ---- Selection ------------------------------------------------------------------------------------------
struct Contender {
  std::string id;
  bool correct = false;
  double median_ms = 0;
  int method_count = 0;
  // An earlier run under the same record key ended with this configuration as its final champion (db::ChampionMark):
  // when it was last marked (unix s; 0: never), and that run's directory.
  int64_t stored_champion_s = 0;
  std::string stored_champion_run;
};

// The finalists: the `k` fastest correct contenders, plus every stored champion among the correct ones that the cut
// left out. Ordered stored champions first (the newest mark first), then fastest first (ties: fewer methods first).
// A later finalist replaces the incumbent only when significantly faster (decide), so racing an earlier run's
// champion first changes the outcome only among configurations equal within noise: a second identical run crowns
// the same champion, and a truly faster configuration still wins.
std::vector<Contender> pick_finalists(std::vector<Contender> all, size_t k);

enum class ChampionDecision { kKeepIncumbent, kNewChampion };
struct SelectionOutcome {
  ChampionDecision decision = ChampionDecision::kKeepIncumbent;
  std::string champion_id;
  std::string reason;
};

// One finalist against the incumbent, from an interleaved paired comparison (ratio = finalist/incumbent).
// The champion changes only when the finalist is significantly faster; when they are the same, the one with
// fewer methods wins (so a method that buys nothing is dropped), unless the incumbent is an earlier run's final
// champion (incumbent.stored_champion_s > 0): it keeps its place, so a second identical run crowns the same champion.
SelectionOutcome decide(const Contender& incumbent, const Contender& finalist, const runner::PairedComparison& cmp);

// ---- Ablation -------------------------------------------------------------------------------------------
// What the SASS said about a claimed method: sass::VerifyStatus (one table).
using SassEvidence = sass::VerifyStatus;

// The verdict enum is the search's (search/generator.h), so the generator reads what ablation decided.
using MethodVerdict = search::Verdict;

struct Attribution {
  // time without the method - time with it (ms): positive means the method saves time.
  double median_ms = 0, ci95_low_ms = 0, ci95_high_ms = 0;
  bool significant() const { return ci95_low_ms > 0; }
};

// From a paired comparison where the incumbent is the champion and the candidate is the champion with the
// method's guard off.
Attribution attribution_from(const runner::PairedComparison& champion_vs_ablated);

// effective: SASS pass and attribution significantly above zero; effective_measured: the attribution is
// significantly above zero and the SASS can neither confirm nor refute (no signature, a flag method, a tool
// error); ineffective: SASS pass, not significant;
// implementation_failed: SASS fail; unverified: SASS inconclusive, tool error or no signature;
// not_ablatable: the method has no guard.
MethodVerdict classify(bool has_guard, SassEvidence sass, const std::optional<Attribution>& attribution);

// ---- Parameter ablation ---------------------------------------------------------------------------------
// What one parameter the champion changed from the baseline is worth: the champion against itself with that one
// parameter back at the baseline's value, raced as a method's variant is (Attribution: time with the baseline's
// value - time with the champion's; positive: the change saves time).
enum class ParamEffect {
  kHelps,        // the attribution's 95% CI is entirely above zero
  kNoEffect,     // the CI includes zero
  kHurts,        // the CI is entirely below zero: the baseline's value is faster
  kNotMeasured,  // the variant did not end in a timed, correct run (compile failure, wrong output, crash)
  kInvalid,      // the variant breaks a constraint of the space: not built
};
std::string_view param_effect_name(ParamEffect e);
std::string_view describe(ParamEffect e);
std::optional<ParamEffect> parse_param_effect(std::string_view name);
// kHelps / kNoEffect / kHurts from a measured attribution.
ParamEffect classify_param(const Attribution& a);

// ---- Stopping -------------------------------------------------------------------------------------------
// StopReason and its names live with the run record (record/stop_reason.h), which the report reads too.
using record::StopReason;
using record::describe;
using record::stop_name;
using record::stop_reason_text;
using record::stop_reason_from_text;

struct StopState {
  int iterations_done = 0;
  int max_iterations = 3;
  int patience = 1;                 // iterations in a row without a significant improvement; 0: no such rule
  int iterations_without_gain = 0;
  bool workload_model = false;      // near_peak counts only with a real roofline
  bool near_peak = false;
  // The champion at or past the floor the measured ceilings give (efficiency >= 1): one iteration without a gain then
  // confirms near peak (vector_add 2^24 at 1.08 of its floor spent a third iteration and a profile on it, issue 36).
  bool at_roof = false;
  bool generator_exhausted = false;
  double time_budget_s = 0;         // the search's wall budget, counted from the end of the gates; 0: none
  double search_s = 0;              // wall seconds since the gates passed (carried across --resume)
  int no_gain_predictions = 0;      // generations in a row whose model predicted no significant gain
  // Once every configuration the evidence allows is measured the generator explores the rest of the space
  // (GeneratorOutput::exploring): that many exploring iterations in a row without a significant gain end the
  // search (measured on vector_add: 12 such iterations, 100 s, no gain). 0: no such rule (the loop's choice when
  // --patience is given: the user's patience governs).
  int explore_patience = kExplorePatience;
  int exploring_without_gain = 0;
  static constexpr int kExplorePatience = 2;
};
// In order: near peak (once an iteration after the gates brought no significant gain), the space exhausted, the time budget, the iteration cap, two predictions in a row of no
// significant gain anywhere in the space, the patience.
StopReason should_stop(const StopState& s);

// The batch of the next iteration: `k`, or half of it (4 at least) where that iteration only confirms near peak at
// the roof itself (the champion at or past its floor after an iteration: one iteration without a gain then ends the
// search, should_stop) and the user left --branches to kopt. vector_add 2^24 (H100, s33-s34): the confirming
// iteration's 12 candidates, 4-8 s of a 37-54 s run, never held a faster one.
int batch_for(const StopState& s, int k, bool user_set);

// The model's verdict on what is left (search/strategy.h: Outlook): no significant gain predicted when its most
// hopeful unmeasured configuration (the lowest lower confidence bound) is not faster than the champion by
// `min_gain`, and the model has seen enough configurations to be trusted (twice the dimensions, at least 8).
bool predicts_no_gain(const search::Outlook& outlook, double champion_ms, size_t dimensions, double min_gain = 0.01);
// Updates the bookkeeping after an iteration.
StopState after_iteration(StopState s, bool champion_improved, bool near_peak, bool generator_exhausted,
                          bool exploring = false);

// ---- Profiling ------------------------------------------------------------------------------------------
// The axes a run's first profile is expected to find binding, from the roofline's JSON (st_.roofline): its pass 2's
// sections then run with pass 1 (profile::ProfileRequest::expected_axes). Empty: no guess.
std::vector<Axis> expected_profile_axes(const util::Json& roofline);

}  // namespace kopt::loop
