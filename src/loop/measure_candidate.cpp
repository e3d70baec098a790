// What measuring one built candidate is: its race against the champion at the primary case (or its timing, Triton),
// its correctness and race at the workload matrix's other cases, the strict numerics, the sanitizer (--sanitize all)
// and the speed-of-light floor. A job of a measure() batch (loop/measure.cpp) on one measuring slot.
#include "compile/command.h"
#include "loop/measure_batch.h"
#include "loop/numerics.h"
#include "loop/phase.h"
#include "pipeline/triton.h"
#include "search/feasibility.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

runner::RunOutcome raced_outcome(const runner::RunOutcome& paired) {
  runner::RunOutcome o = paired;
  if (!paired.details.contains("libs") || paired.details["libs"].size() != 2) return o;
  const auto& lib = paired.details["libs"][1];
  o.status = runner::parse_status(lib.value("status", std::string())).value_or(runner::RunStatus::kInternal);
  o.message = lib.value("message", std::string());
  o.samples_ms = lib.value("samples_ms", std::vector<double>{});
  o.timing.reset();
  if (o.status == runner::RunStatus::kOk && o.samples_ms.size() >= 2) o.timing = runner::compute_stats(o.samples_ms);
  if (o.status == runner::RunStatus::kOk && !o.timing) {
    o.status = runner::RunStatus::kInternal;
    o.message = "the race recorded no rounds for the candidate";
  }
  return o;
}

namespace {
search::CandidateStatus status_of(runner::RunStatus s) {
  switch (s) {
    case runner::RunStatus::kOk: return search::CandidateStatus::kOk;
    case runner::RunStatus::kTimedOut: return search::CandidateStatus::kTimedOut;
    case runner::RunStatus::kCrashed:
    case runner::RunStatus::kCudaError: return search::CandidateStatus::kCrashed;
    default: return search::CandidateStatus::kIncorrect;
  }
}

// Why a built candidate is not measured (its status is then compile_failed): its build failed, or ptxas's resources
// before measuring: a point of a derived space that spills where the baseline does not is pruned unmeasured
// (local-memory traffic in the inner loop; a spilling point is never the best of such a space). Not with a flag
// method on (-maxrregcount trades registers for spills on purpose: it is measured).
std::optional<std::string> unmeasured_note(const CandidateRun& cr, bool derived, const compile::CompileResult& baseline_build,
                                           double compile_timeout_s) {
  if (!cr.build.ok())
    return cr.build.status == compile::CompileStatus::kTimedOut
               ? fmt::format("compile time limit: nvcc ran past {:.0f} s and was killed", compile_timeout_s)
               : std::string(compile::to_string(cr.build.status));
  if (derived && cr.candidate.flags.empty() && compile::spilling_functions(baseline_build.resources).empty())
    if (auto sp = compile::spilling_functions(cr.build.resources); !sp.empty())
      return "spills registers (ptxas), pruned before measuring: " + util::join(sp, "; ");
  return std::nullopt;
}

// The progress line's figure of a measured candidate: its time and race, or why it has none.
std::string measured_figure(const CandidateRun& cr) {
  std::string figure = cr.note;
  if (cr.status == search::CandidateStatus::kOk && cr.outcome.timing) {
    figure = fmt::format("{:.4f} ms", cr.outcome.timing->median_ms);
    if (cr.vs_champion)
      figure += fmt::format(" ({:.3f}x the champion, 95% CI [{:.3f}, {:.3f}], {} rounds)", cr.vs_champion->median_ratio,
                            cr.vs_champion->ci95_low, cr.vs_champion->ci95_high, cr.vs_champion->rounds);
  }
  return figure;
}
}  // namespace

bool Optimizer::MeasureBatch::measure_at_primary(CandidateRun& cr, const fs::path& cdir) {
  bool lost = false;  // the slot's worker died under it, with no verdict (retried elsewhere when there is one)
  Phase p(o, "measure");
  auto m0 = Clock::now();
  if (o.triton()) {
    // The other cases checked in the same child after its timing (`--also-check`): the kernel imported and compiled
    // once a candidate, not once a case (check_at_cases takes their verdicts). A Triton run has no library for run()'s
    // bookkeeping of checked champions: the request goes to the lab as it is.
    auto req =
        o.request({cr.build.library}, {&cr.candidate}, cdir / "run.json", runner::RunMode::kTime, cdir / "cubins", false, {});
    for (size_t i = 0; i < o.cases_.size(); ++i)
      if (i != o.primary_) req.also_check.push_back(o.cases_[i].golden_arg());
    if (auto it = triton_caches.find(cr.candidate.id); it != triton_caches.end()) req.triton_cache_dir = it->second;
    req.timeout_s += static_cast<double>(req.also_check.size()) * o.o_.job.run_timeout_s;
    cr.outcome = o.lab_.run(req);
    lost = runner::lost_worker(cr.outcome);
  } else {
    // Raced against the champion in interleaved rounds, stopped as soon as it is ranked (runner/race.h).
    auto raced = o.run({fs::path(o.st_.champion->library), cr.build.library}, {&o.st_.champion->candidate, &cr.candidate},
                     cdir / "run.json", runner::RunMode::kPaired, {}, true);
    lost = runner::lost_worker(raced);
    cr.outcome = raced_outcome(raced);
    if (raced.status == runner::RunStatus::kOk && cr.outcome.timing) {
      auto a = raced.details["libs"][0].value("samples_ms", std::vector<double>{});
      cr.vs_champion = runner::compare_paired(a, cr.outcome.samples_ms);
    }
  }
  cr.measure_ms = std::chrono::duration<double, std::milli>(Clock::now() - m0).count();
  cr.search_s = o.tick();
  return lost;
}

std::optional<dispatch::Attempt> Optimizer::MeasureBatch::measure_at_cases(CandidateRun& cr, const fs::path& cdir, int slot, int attempt) {
  // Correct at every case of the workload matrix, not only at the one it was raced at (issue 18); raced there
  // too when it was raced at the primary case, so the search sees the objective selection ranks by.
  // Counted as measuring (state.json phase_seconds): before, these races at the other cases were in no phase,
  // about 0.3 s a candidate at sgemm 4096^3 (a third of a 70 s search on the H200, 2026-12-01).
  if (cr.status != search::CandidateStatus::kOk || !o.over_cases()) return std::nullopt;
  Phase p(o, "measure");
  const auto c0 = Clock::now();
  bool lost_at_case = false;  // as at the primary case: a worker that died with no result is no verdict yet
  auto wrong = cr.vs_champion ? o.race_at_cases(cr, cdir, &lost_at_case) : o.check_at_cases(cr, cdir, &lost_at_case);
  cr.cases_ms = std::chrono::duration<double, std::milli>(Clock::now() - c0).count();
  if (wrong) {
    if (util::interrupted()) return dispatch::Attempt::kStop;  // a check cut by Ctrl-C is not a verdict
    if (lost_at_case && attempt == 0 && o.slots_.size() > 1) {
      o.say("    {:<10} lost its worker on {} at another case ({}): measured again on another GPU", cr.candidate.id,
          o.slot_name(slot), *wrong);
      return dispatch::Attempt::kWorkerLost;
    }
    cr.status = search::CandidateStatus::kIncorrect;
    cr.note = *wrong;
    o.reject(cr.candidate.id, RejectGate::kCases, *wrong);
  }
  return std::nullopt;
}

std::optional<dispatch::Attempt> Optimizer::MeasureBatch::sanitize_candidate(CandidateRun& cr, const fs::path& cdir) {
  // --sanitize all: every candidate that passed its check, not only the finalists (one at a time).
  if (cr.status == search::CandidateStatus::kOk && sanitize::should_sanitize(o.o_.gates.sanitize, sanitize::Role::kCandidate)) {
    std::lock_guard<std::mutex> lock(sanitizer_mu);
    auto v = o.run_sanitizer(cr.build.library, &cr.candidate, cdir / "sanitize");
    if (auto st = o.write_json(cdir / "sanitize" / "verdict.json", "sanitizer", sanitize::to_json(v)); !st) return stop_with(st.error());
    if (v.rejected) {
      cr.status = search::CandidateStatus::kIncorrect;
      cr.note = "sanitizer: " + v.reason;
      o.reject(cr.candidate.id, RejectGate::kSanitizer, v.reason);
    }
  }
  return std::nullopt;
}

// The feasibility model (search/feasibility.h) over what the run measured (its history and ablations) and `batch`
// (the runs of the batch measured so far): why `c` is predicted infeasible, or nullopt.
std::optional<std::string> Optimizer::predicted_infeasible(const search::Candidate& c,
                                                           const std::vector<search::Measurement>& batch) const {
  if (!space_ || !c.config || !space_->in_range(*c.config)) return std::nullopt;
  std::vector<search::FeasibilityObservation> obs;
  bool signal = false;
  for (const auto* list : {&st_.history, &st_.ablations, &batch})
    for (const auto& m : *list) {
      if (!m.candidate.config || m.predicted_infeasible) continue;  // a prediction teaches the model nothing
      obs.push_back({*m.candidate.config, m.status == search::CandidateStatus::kOk, m.unwritten_fraction});
      signal = signal || m.unwritten_fraction.has_value();
    }
  if (!signal) return std::nullopt;
  auto p = search::FeasibilityModel(*space_, obs).predict(*c.config);
  if (!p) return std::nullopt;
  return p->reason(*space_) + ": built, not measured";
}

std::optional<std::string> Optimizer::MeasureBatch::predicted_infeasible(const search::Candidate& c) {
  if (!budgeted) return std::nullopt;  // an ablation's variants and finalists raced again are measured whatever
  std::vector<search::Measurement> batch;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [i, r] : done) batch.push_back(measurement_of(r, 0));
  }
  return o.predicted_infeasible(c, batch);
}

dispatch::Attempt Optimizer::MeasureBatch::measure_candidate(size_t i, int slot, int attempt) {
  CandidateRun cr;
  cr.candidate = cands[i];
  cr.build = builds[i];
  cr.slot = slot;
  fs::path cdir = iter_dir / "candidates" / cands[i].id;
  if (auto st = o.write_json(cdir / "build.json", "build", compile::to_json(cr.build)); !st) return stop_with(st.error());
  if (auto note = unmeasured_note(cr, o.derived_.has_value(), o.prep_.build, o.o_.job.compile_timeout_s)) {
    cr.status = search::CandidateStatus::kCompileFailed;
    cr.note = *note;
    mark_done(i, cr);
    return dispatch::Attempt::kDone;
  }
  if (util::interrupted()) return dispatch::Attempt::kStop;
  o.tick();
  if (budgeted && o.budget_spent()) {
    std::lock_guard<std::mutex> lock(mu);
    if (!budget_said) o.say("    the time budget is spent: {} of {} candidates not measured", cands.size() - done.size(), cands.size());
    budget_said = true;
    return dispatch::Attempt::kStop;
  }
  if (auto why = predicted_infeasible(cr.candidate)) {
    cr.status = search::CandidateStatus::kIncorrect;
    cr.note = *why;
    cr.predicted_infeasible = true;
    o.say("    {:<10} {:<10} {}", cr.candidate.id, "skipped", cr.note);
    mark_done(i, std::move(cr));
    return dispatch::Attempt::kDone;
  }
  if (measure_at_primary(cr, cdir) && attempt == 0 && o.slots_.size() > 1) {
    o.say("    {:<10} lost its worker on {} ({}): measured again on another GPU", cr.candidate.id, o.slot_name(slot), cr.outcome.message);
    return dispatch::Attempt::kWorkerLost;
  }
  if (o.triton()) {
    cr.sass = o.sass_check(pipeline::triton_cubins(cr.outcome.details), cr.candidate);
    if (auto st = o.write_json(cdir / "sass.json", "sass", cr.sass); !st) return stop_with(st.error());
  }
  if (cr.outcome.status == runner::RunStatus::kInterrupted) return dispatch::Attempt::kStop;  // no verdict
  cr.status = status_of(cr.outcome.status);
  cr.note = cr.outcome.message;
  if (cr.status == search::CandidateStatus::kOk && o.o_.job.numerics == search::NumericsMode::kStrict) {
    auto v = judge_strict(cr.outcome.details, o.baseline_result_);
    if (!v.ok) {
      cr.status = search::CandidateStatus::kIncorrect;
      cr.note = v.reason;
    }
  }
  if (auto a = measure_at_cases(cr, cdir, slot, attempt)) return *a;
  if (auto a = sanitize_candidate(cr, cdir)) return *a;
  // Faster than this GPU can run the work: not evidence (docs/GATES.md "Evidence that cannot be gamed").
  if (cr.status == search::CandidateStatus::kOk && cr.outcome.timing && o.sol_)
    if (auto why = roofline::below_speed_of_light(*o.sol_, cr.outcome.timing->median_ms)) {
      cr.status = search::CandidateStatus::kIncorrect;
      cr.note = "below_speed_of_light: " + *why;
      o.reject(cr.candidate.id, RejectGate::kSpeedOfLight, *why);
    }
  std::string figure = measured_figure(cr);
  if (o.slots_.size() > 1) figure += " on " + o.slot_name(slot);
  o.say("    {:<10} {:<10} {}", cr.candidate.id, search::candidate_status_name(cr.status), figure);
  if (cr.measure_ms > 0) o.note_measured();
  mark_done(i, std::move(cr));
  return dispatch::Attempt::kDone;
}

}  // namespace kopt::loop
