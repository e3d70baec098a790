#include "loop/decisions.h"

#include <algorithm>

namespace kopt::loop {

std::vector<Contender> pick_finalists(std::vector<Contender> all, size_t k) {
  std::vector<Contender> ok;
  for (auto& c : all)
    if (c.correct && c.median_ms > 0) ok.push_back(c);
  std::stable_sort(ok.begin(), ok.end(), [](const Contender& a, const Contender& b) {
    if (a.median_ms != b.median_ms) return a.median_ms < b.median_ms;
    return a.method_count < b.method_count;
  });
  // The k fastest, and the stored champions beyond them.
  std::vector<Contender> out;
  for (size_t i = 0; i < ok.size(); ++i)
    if (i < k || ok[i].stored_champion_s > 0) out.push_back(ok[i]);
  std::stable_sort(out.begin(), out.end(),
                   [](const Contender& a, const Contender& b) { return a.stored_champion_s > b.stored_champion_s; });
  return out;
}

SelectionOutcome decide(const Contender& inc, const Contender& fin, const runner::PairedComparison& cmp) {
  SelectionOutcome out;
  out.champion_id = inc.id;
  auto pct = [](double r) { return std::to_string(static_cast<int>((1 - r) * 1000) / 10.0).substr(0, 5); };
  switch (cmp.verdict) {
    case runner::Verdict::kFaster:
      out.decision = ChampionDecision::kNewChampion;
      out.champion_id = fin.id;
      out.reason = fin.id + " is significantly faster (median ratio " + std::to_string(cmp.median_ratio) +
                   ", 95% CI [" + std::to_string(cmp.ci95_low) + ", " + std::to_string(cmp.ci95_high) + "], " +
                   pct(cmp.median_ratio) + "% less time)";
      break;
    case runner::Verdict::kSame:
      if (inc.stored_champion_s > 0) {
        // An earlier run's final champion yields only to a significantly faster finalist (pick_finalists): a tie
        // broken by method count would crown another champion on every run that races them in another order.
        out.reason = "same speed within the noise; the incumbent, an earlier run's final champion, keeps its place";
      } else if (fin.method_count < inc.method_count) {
        out.decision = ChampionDecision::kNewChampion;
        out.champion_id = fin.id;
        out.reason = "same speed within the noise; " + fin.id + " uses fewer methods";
      } else {
        out.reason = "same speed within the noise; the incumbent keeps its place";
      }
      break;
    case runner::Verdict::kSlower:
      out.reason = fin.id + " is significantly slower";
      break;
    case runner::Verdict::kAmbiguous:
      out.reason = fin.id + ": difference not larger than the noise (ambiguous); the incumbent keeps its place";
      break;
  }
  return out;
}

Attribution attribution_from(const runner::PairedComparison& c) {
  // The comparison's "saved" is incumbent - candidate = champion - ablated; attribution is its negation.
  return {-c.median_diff_ms, -c.diff_ci95_high_ms, -c.diff_ci95_low_ms};
}

MethodVerdict classify(bool has_guard, SassEvidence sass, const std::optional<Attribution>& a) {
  if (sass == SassEvidence::kFail) return MethodVerdict::kImplementationFailed;
  if (!has_guard) return MethodVerdict::kNotAblatable;
  if (sass != SassEvidence::kPass) return a && a->significant() ? MethodVerdict::kMeasuredEffective : MethodVerdict::kUnverified;
  if (!a) return MethodVerdict::kUnverified;
  return a->significant() ? MethodVerdict::kEffective : MethodVerdict::kIneffective;
}

std::string_view param_effect_name(ParamEffect e) {
  switch (e) {
    case ParamEffect::kHelps: return "helps";
    case ParamEffect::kNoEffect: return "no_effect";
    case ParamEffect::kHurts: return "hurts";
    case ParamEffect::kNotMeasured: return "not_measured";
    case ParamEffect::kInvalid: return "invalid";
  }
  return "not_measured";
}

std::string_view describe(ParamEffect e) {
  switch (e) {
    case ParamEffect::kHelps: return "the change saves time (95% CI above zero)";
    case ParamEffect::kNoEffect: return "no measurable effect (95% CI includes zero)";
    case ParamEffect::kHurts: return "the change costs time: the baseline's value is faster (95% CI below zero)";
    case ParamEffect::kNotMeasured: return "the variant with the baseline's value was not timed (it failed)";
    case ParamEffect::kInvalid: return "the baseline's value breaks a constraint of the space with the champion's other values";
  }
  return "";
}

std::optional<ParamEffect> parse_param_effect(std::string_view name) {
  for (auto e : {ParamEffect::kHelps, ParamEffect::kNoEffect, ParamEffect::kHurts, ParamEffect::kNotMeasured, ParamEffect::kInvalid})
    if (param_effect_name(e) == name) return e;
  return std::nullopt;
}

ParamEffect classify_param(const Attribution& a) {
  if (a.ci95_low_ms > 0) return ParamEffect::kHelps;
  if (a.ci95_high_ms < 0) return ParamEffect::kHurts;
  return ParamEffect::kNoEffect;
}

StopReason should_stop(const StopState& s) {
  // Near peak is the roofline's verdict on a model of the minimum work; it stops the search only once the search
  // has confirmed it: after two iterations in a row that brought no significantly faster champion (never at the
  // gates; one iteration's batch is a handful of points of a space, and "near" still leaves up to 20%), or after one
  // when the champion is at the roof itself (nothing left by the model; a run still makes two iterations at least).
  if (s.workload_model && s.near_peak && s.iterations_done >= 2 &&
      (s.iterations_without_gain >= 2 || (s.at_roof && s.iterations_without_gain >= 1)))
    return StopReason::kNearPeak;
  if (s.generator_exhausted) return StopReason::kGeneratorExhausted;
  if (s.time_budget_s > 0 && s.search_s >= s.time_budget_s) return StopReason::kTimeBudget;
  if (s.iterations_done >= s.max_iterations) return StopReason::kMaxIterations;
  if (s.no_gain_predictions >= 2) return StopReason::kNoPredictedGain;
  if (s.explore_patience > 0 && s.exploring_without_gain >= s.explore_patience) return StopReason::kExplorationSpent;
  if (s.patience > 0 && s.iterations_without_gain >= s.patience) return StopReason::kNoImprovement;
  return StopReason::kNone;
}

int batch_for(const StopState& s, int k, bool user_set) {
  const bool confirming = s.workload_model && s.near_peak && s.at_roof && s.iterations_done >= 1;
  return confirming && !user_set ? std::max(std::min(k, 4), k / 2) : k;
}

bool predicts_no_gain(const search::Outlook& o, double champion_ms, size_t dimensions, double min_gain) {
  if (!o.best_lcb_ms || champion_ms <= 0) return false;
  if (o.observations < static_cast<int>(std::max<size_t>(8, 2 * dimensions))) return false;
  return *o.best_lcb_ms >= champion_ms * (1 - min_gain);
}

StopState after_iteration(StopState s, bool improved, bool near_peak, bool exhausted, bool exploring) {
  ++s.iterations_done;
  s.iterations_without_gain = improved ? 0 : s.iterations_without_gain + 1;
  s.exploring_without_gain = exploring && !improved ? s.exploring_without_gain + 1 : 0;
  s.near_peak = near_peak;
  s.generator_exhausted = exhausted;
  return s;
}

// What the first profile's pass 1 is expected to find binding, so that its pass 2 can run with it (profile::
// ProfileRequest::expected_axes; a run that collected every binding axis's sections is kept): memory, for a kernel the
// workload model places memory-bound at 75 % of its floor or more (its DRAM throughput is then well past pass 1's 60 %
// "busy" mark); compute and memory for one placed compute-bound at half its floor or more (sgemm 4096^3's champions:
// compute busy, memory SOL 62-71 %, near the mark: either or both bind, and both are collected); nothing otherwise
// (latency is likely to bind). A wrong guess costs a heavier pass 1 (about 2 s), not a decision; a right one saves
// pass 1 (2.7-3.0 s, H100).
std::vector<Axis> expected_profile_axes(const util::Json& roofline) {
  if (!roofline.is_object()) return {};
  const auto b = roofline.find("bound");
  const auto e = roofline.find("efficiency");
  if (b == roofline.end() || !b->is_string() || e == roofline.end() || !e->is_number()) return {};
  const double eff = e->get<double>();
  if (b->get<std::string>() == "memory" && eff >= 0.75) return {Axis::kMemory};
  if (b->get<std::string>() == "compute" && eff >= 0.5) return {Axis::kCompute, Axis::kMemory};
  return {};
}

}  // namespace kopt::loop
