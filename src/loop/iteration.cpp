// One iteration of the search: generate, measure, select, ablate the new champion, then profile and place it.
#include <set>

#include "loop/candidate_check.h"
#include "loop/optimizer.h"
#include "loop/strategy_memory.h"

namespace kopt::loop {

namespace fs = std::filesystem;

namespace {
// The model's outlook: two generations in a row that see no significant gain anywhere end the search.
void apply_outlook(search::GeneratorOutput& out, StopState& stop, double champ_ms, size_t dims) {
  if (!out.outlook) return;
  // The model's figures are what the search ranks by (the weighted objective over a workload matrix).
  const bool none = predicts_no_gain(*out.outlook, champ_ms, dims);
  stop.no_gain_predictions = none ? stop.no_gain_predictions + 1 : 0;
  if (none)
    out.notes.push_back(fmt::format("the model predicts no significant gain: its most hopeful unmeasured configuration's "
                                    "lower bound is {:.4f} ms against the champion's {:.4f} ms ({} measured)",
                                    *out.outlook->best_lcb_ms, champ_ms, out.outlook->observations));
}

// plan.json: the method budget's slots, the generator's selection, notes, candidates and outlook.
util::Json plan_json(const search::GeneratorInput& in, const search::GeneratorOutput& out) {
  util::Json planned = util::Json::array();
  for (const auto& c : out.candidates) planned.push_back(search::to_json(c));
  // What the feasibility model left out of the search (search/feasibility.h), each with its reason.
  util::Json predicted = util::Json::array();
  for (const auto& p : out.predicted_infeasible) predicted.push_back({{"point", p.key}, {"why", p.reason}});
  auto slot = [&](Axis a) {
    auto it = in.plan.slots.find(a);
    return it == in.plan.slots.end() ? 0 : it->second;
  };
  return {{"slots", {{"compute", slot(Axis::kCompute)}, {"memory", slot(Axis::kMemory)}, {"latency", slot(Axis::kLatency)}}},
          {"selection", search::to_json(out.selection)}, {"notes", out.notes}, {"candidates", planned},
          {"predicted_infeasible", predicted},
          {"outlook", out.outlook ? util::Json{{"remaining", out.outlook->remaining},
                                               {"best_lcb_ms", out.outlook->best_lcb_ms ? util::Json(*out.outlook->best_lcb_ms) : util::Json(nullptr)},
                                               {"observations", out.outlook->observations},
                                               {"predicted_infeasible", out.outlook->predicted_infeasible}}
                                  : util::Json(nullptr)}};
}

// Every candidate has an id no measurement of the run has: one the generator left empty, or one the history holds
// already (an iteration resumed after an interrupt kept what it had measured), gets the next free i<it>c<n>.
void assign_free_ids(std::vector<search::Candidate>& cands, const std::vector<search::Measurement>& history, int it) {
  std::set<std::string> taken;
  for (const auto& m : history) taken.insert(m.candidate.id);
  size_t next = 1;
  for (auto& c : cands) {
    if (!c.id.empty() && !taken.count(c.id)) {
      taken.insert(c.id);
      continue;
    }
    while (taken.count(fmt::format("i{}c{}", it, next))) ++next;
    c.id = fmt::format("i{}c{}", it, next);
    taken.insert(c.id);
  }
}
}  // namespace

std::optional<RunOutcome> Optimizer::iterate(search::Generator& gen) {
  const int it = st_.iterations_done + 1;
  fs::path idir = dir_ / fmt::format("iter_{:02d}", it);
  fs::create_directories(idir);
  say("iteration {}/{}: champion {} at {:.4f} ms", it, o_.iterations, st_.champion->candidate.id, st_.champion->median_ms);

  // ---- Generate ----
  position_ = roofline_position(st_.roofline);  // where this iteration's methods are chosen (the strategy memory's key)
  search::GeneratorInput in = generator_input(it, idir);
  in.method_bonus = strategy_memory_bonus();
  // A generator that repairs its candidates (--generator llm) checks them through the lab before returning them.
  LoopChecker checker({&o_.job, &prep_, &baseline_result_, &lab_, jobs_ > 0 ? jobs_ : 1, idir / "checks"});
  in.checker = &checker;
  Result<search::GeneratorOutput> out = propose(gen, in);
  if (!out) {
    if (auto st = write_json(idir / "generator_error.json", "generator_error", {{"message", out.error().message}}); !st) return fail(st.error());
    if (util::interrupted() || out.error().code == ExitCode::kInterrupted) return interrupted_exit();
    // A generator that failed (an endpoint down, a command that crashed) leaves the run resumable, not finished.
    return generator_stopped(out.error());
  }
  for (const auto& m : out->checked_failures) st_.history.push_back(m);
  apply_outlook(*out, st_.stop, st_.champion->objective(), space_->dims.size());
  if (auto st = write_json(idir / "plan.json", "plan", plan_json(in, *out)); !st) return fail(st.error());
  if (derived_) record_predicted(out->predicted_infeasible);
  if (should_stop(st_.stop) == StopReason::kNoPredictedGain) {
    profile_champion(idir);
    if (auto st = save_state(); !st) return fail(st.error());
    begin_after_search();  // after the profile, which nothing may run beside
    return finish(StopReason::kNoPredictedGain, "");
  }
  if (out->candidates.empty()) {
    st_.stop = after_iteration(st_.stop, false, st_.stop.near_peak, true);
    st_.iterations_done = it;
    if (auto st = save_state(); !st) return fail(st.error());
    return std::nullopt;
  }
  assign_free_ids(out->candidates, st_.history, it);
  note_warm_start(out->candidates);

  // ---- Measure, then select: finalists re-timed in paired rounds against the incumbent ----
  auto runs = measure(out->candidates, idir, "candidates", true);
  if (!runs) return fail(runs.error());
  // On an interrupt, what was measured is kept (the summary counts it; --resume does not measure it again); a
  // candidate that did not end in a measurement (the one in flight) is proposed again on resume.
  auto keep_measured_and_stop = [&] {
    std::vector<CandidateRun> measured;
    for (auto& r : *runs)
      if (r.status == search::CandidateStatus::kOk && r.outcome.timing) measured.push_back(std::move(r));
    record_history(measured, it);
    return interrupted_exit();
  };
  if (util::interrupted()) return keep_measured_and_stop();
  // Reused finalists that could be crowned are measured again before anything is decided (loop/reuse.h).
  if (auto st = race_reused_finalists(*runs, idir); !st) return fail(st.error());
  if (util::interrupted()) return keep_measured_and_stop();
  record_history(*runs, it);
  auto sel = select(*runs, idir);
  if (!sel) return fail(sel.error());

  // ---- Ablation of the champion's methods (when it changed) ----
  const CandidateRun* champ_run = nullptr;
  for (const auto& r : *runs)
    if (r.candidate.id == st_.champion->candidate.id) champ_run = &r;
  std::optional<CandidateRun> adopted;  // an ablation variant crowned (champ_run then points to it)
  if (auto st = ablate_champion(champ_run, adopted, it, idir); !st) return fail(st.error());
  if (auto st = close_iteration(champ_run, *runs, *sel, *out, it, idir); !st) return fail(st.error());
  return std::nullopt;
}

Status Optimizer::ablate_champion(const CandidateRun*& champ_run, std::optional<CandidateRun>& adopted, int it, const fs::path& idir) {
  // Every new champion's methods are ablated: what a method is worth changes with the parameters (on the H200 at
  // sgemm 4096^3, cp_async_pipeline saved 17% at the iteration-1 champion and cost 6% at a later one), and each
  // variant is a neighbour of the champion the search learns from. A variant faster than the champion is selected.
  util::Json ablation = {{"methods", util::Json::array()}, {"params", util::Json::array()}};
  if (champ_run) {
    std::vector<CandidateRun> variants;
    const size_t verdicts_before = st_.verdicts.size();
    KOPT_TRY_ASSIGN(ablation, ablate(*champ_run, it, idir, &variants));
    record_method_outcomes(it, std::vector<search::MethodVerdict>(st_.verdicts.begin() + static_cast<long>(verdicts_before),
                                                                  st_.verdicts.end()));
    st_.ablated_methods = champ_run->candidate.methods;
    KOPT_TRY_ASSIGN(adopted, adopt_faster_variants(std::move(variants), it, idir / "ablation"));
    if (adopted) champ_run = &*adopted;
  }
  return write_json(idir / "ablation.json", "ablation", ablation);
}

Status Optimizer::close_iteration(const CandidateRun* champ_run, const std::vector<CandidateRun>& runs, const SelectionResult& sel,
                                  const search::GeneratorOutput& out, int it, const fs::path& idir) {
  // ---- Profile and roofline of the new champion ----
  // The profile is evidence for choosing methods: taken when the search needs new evidence, i.e. when an iteration
  // brought no faster champion, and of a champion not profiled yet (a profile costs 15-30 s; while parameters keep
  // paying, the search goes on without one). The final champion is profiled when the run ends (finish).
  bool near_peak = st_.stop.near_peak, at_roof = st_.stop.at_roof;
  if (!sel.improved) profile_champion(idir);
  if (champ_run) {
    auto placed = place(*champ_run->outcome.timing, idir, champ_run->candidate.id);
    if (placed) {
      near_peak = placed->near_peak();
      at_roof = placed->at_roof();
    }
  }
  update_frontier();
  int correct = 0;
  for (const auto& r : runs) correct += r.status == search::CandidateStatus::kOk && r.outcome.timing ? 1 : 0;
  st_.timeline.push_back({{"iteration", it}, {"champion_id", st_.champion->candidate.id}, {"champion_ms", st_.champion->median_ms},
                          {"improved", sel.improved}, {"candidates", runs.size()}, {"correct", correct},
                          {"note", out.notes.empty() ? std::string() : out.notes.front()}});
  st_.stop = after_iteration(st_.stop, sel.improved, near_peak, false, out.exploring);
  st_.stop.at_roof = at_roof;
  st_.iterations_done = it;
  return save_state();
}

}  // namespace kopt::loop
