// `kopt optimize`: the algorithm. The stages it calls live beside it (optimizer.h lists which file holds what).
#include "loop/optimize.h"

#include <future>
#include <set>

#include "loop/optimizer.h"
#include "loop/candidate_check.h"
#include "loop/strategy_memory.h"
#include "search/builtin_generator.h"
#include "search/external_generator.h"
#include "search/manual_generator.h"
#include "util/fs.h"
#include "util/output.h"

namespace kopt::loop {

namespace fs = std::filesystem;

RunOutcome Optimizer::run() {
  // Inputs first, then the hardware, then the run directory, then the other gates: no run directory without the
  // hardware (a resumed run's state is checked first), no candidate before all four gates pass.
  if (auto rc = check_inputs()) return *rc;
  // Beside the hardware gate (issue 36): the contract check of ref.py, and the job's golden data (a new run's only).
  std::future<Status> contract;
  if (o_.contract_check) contract = std::async(std::launch::async, o_.contract_check);
  if (!o_.resume) lab_.start_early_work();
  auto contract_failed = [&]() -> std::optional<RunOutcome> {
    if (!contract.valid()) return std::nullopt;
    Status st = contract.get();
    if (st) return std::nullopt;
    lab_.stop_early_work();
    util::note_failure(st.error().message);
    return outcome(RunEnd::kInputError, st.error().code, "kopt optimize: " + st.error().message + "\n");
  };
  if (o_.resume) {
    if (auto rc = contract_failed()) return *rc;
    if (auto rc = open_run_dir()) return *rc;
    if (auto rc = check_hardware()) return *rc;
  } else {
    auto hw = check_hardware();
    if (auto rc = contract_failed()) return *rc;  // ref.py's fault is said first, as before the gate
    if (hw) {
      lab_.stop_early_work();
      return *hw;
    }
    if (auto rc = open_run_dir()) {
      lab_.stop_early_work();
      return *rc;
    }
  }
  if (auto rc = pass_gates()) return *rc;
  plan_warm_start();

  std::unique_ptr<search::Generator> gen;
  util::SystemRunner generator_runner;
  if (o_.generator == "builtin") {
    gen = std::make_unique<search::BuiltinGenerator>();
  } else if (o_.generator == "llm") {
    auto g = search::make_llm_generator(o_.llm, false, nullptr);  // the command line checked the endpoint
    if (!g) return generator_stopped(g.error());
    gen = std::move(g).value();
  } else if (o_.generator == "manual") {
    search::ManualOptions mo;
    mo.timeout_s = o_.manual_timeout_s;
    gen = std::make_unique<search::ManualGenerator>(mo);
  } else {
    search::ExternalOptions eo;
    eo.timeout_s = o_.generator_timeout_s;
    gen = std::make_unique<search::ExternalGenerator>(o_.generator, generator_runner, eo);
  }
  while (true) {
    tick();
    StopReason why = should_stop(st_.stop);
    if (why != StopReason::kNone) {
      // The champion's safety gates first (--champion-gates final): the profile is of the one that passed.
      if (auto st = verify_champion(dir_ / fmt::format("iter_{:02d}", st_.iterations_done)); !st) return fail(st.error());
      profile_champion(dir_ / fmt::format("iter_{:02d}", st_.iterations_done));
      return finish(why, "");
    }
    if (util::interrupted()) return interrupted_exit();
    if (auto rc = iterate(*gen)) return *rc;
  }
}

search::GeneratorInput Optimizer::generator_input(int it, const fs::path& idir) const {
  search::GeneratorInput in;
  in.iteration = it;
  in.k = branches_for(o_);
  in.seed = o_.seed + static_cast<uint64_t>(it);
  in.plan.slots = budget_from_roofline();
  in.numerics = o_.job.numerics;
  in.registry = reg_;
  in.space = &*space_;
  in.iteration_dir = idir;
  in.baseline_source = o_.job.kernel;
  search::Measurement champ_m;
  champ_m.candidate = st_.champion->candidate;
  champ_m.median_ms = st_.champion->median_ms;
  if (st_.champion->objective_ms > 0) champ_m.objective_ms = st_.champion->objective_ms;
  in.champion = champ_m;
  in.history = st_.history;
  in.ablations = st_.ablations;
  in.verdicts = st_.verdicts;
  in.metrics = st_.metrics;
  in.context.dims = o_.job.dims;
  in.context.contract_signature = prep_.signature.normalised;
  in.context.roofline = st_.roofline;
  if (o_.warm_start) in.warm_start = suggestions(st_.warm_start);
  return in;
}

search::Measurement measurement_of(const CandidateRun& r, int iteration) {
  search::Measurement m;
  m.candidate = r.candidate;
  m.status = r.status;
  m.iteration = iteration;
  if (r.status == search::CandidateStatus::kOk && r.outcome.timing) m.median_ms = r.outcome.timing->median_ms;
  if (r.status == search::CandidateStatus::kOk) m.objective_ms = r.objective_ms;
  if (r.reused) m.reused = reused_json(*r.reused);
  return m;
}

namespace {
db::Verdict verdict_of(search::CandidateStatus s) {  // `incorrect` includes a candidate a gate rejected
  switch (s) {
    case search::CandidateStatus::kOk: return db::Verdict::kCorrect;
    case search::CandidateStatus::kCrashed: return db::Verdict::kCrashed;
    case search::CandidateStatus::kTimedOut: return db::Verdict::kTimedOut;
    case search::CandidateStatus::kIncorrect:
    case search::CandidateStatus::kCompileFailed: break;
  }
  return db::Verdict::kIncorrect;
}
}  // namespace

void Optimizer::record_run(const CandidateRun& r) {
  // Built, and a verdict from the runner (not cut by Ctrl-C): a measurement worth keeping, correct or not. A reused
  // run measured nothing: its record is already there.
  if (r.reused || r.status == search::CandidateStatus::kCompileFailed || r.outcome.status == runner::RunStatus::kInterrupted) return;
  record_measured(r.candidate, r.outcome, triton() ? runner::RunMode::kTime : runner::RunMode::kPaired, verdict_of(r.status),
                  r.note, r.build.resources, raced_json(r));
}

bool Optimizer::ensure_record_context() {
  if (record_ctx_) return true;
  const fs::path kernel = original_kernel_.empty() ? o_.job.kernel : original_kernel_;
  auto text = util::read_file(kernel);
  if (!text) {
    util::progress_print(fmt::format("  warning: the results database is not used: {}", text.error().message));
    sink_ = nullptr;
    lookup_ = nullptr;
    return false;
  }
  record_ctx_ = pipeline::record_context(o_.job, prep_, *text, util::meta_info(), db::Source::kOptimize, dir_);
  record_ctx_->kernel_path = kernel.string();
  return true;
}

void Optimizer::record_measured(const search::Candidate& c, const runner::RunOutcome& outcome, runner::RunMode mode,
                                db::Verdict verdict, const std::string& note,
                                const std::vector<compile::KernelResources>& resources, const util::Json& raced) {
  if (!sink_ || !ensure_record_context()) return;
  db::Record rec = pipeline::make_record(*record_ctx_, &c, outcome, mode, verdict, note, resources);
  rec.raced = raced;
  if (auto st = sink_->record(rec); !st) {
    util::progress_print(
        fmt::format("  warning: the results database: {}; the run goes on without recording", st.error().message));
    sink_ = nullptr;
  }
}

void Optimizer::record_history(const std::vector<CandidateRun>& runs, int it) {
  for (const auto& r : runs) {
    search::Measurement m = measurement_of(r, it);
    m.search_s = r.search_s;
    m.compile_ms = r.build.compile_ms;
    m.sass_ms = r.sass_ms;
    m.measure_ms = r.measure_ms;
    m.cases_ms = r.cases_ms;
    st_.history.push_back(m);
    if (!r.build.library.empty()) libraries_[r.candidate.id] = r.build.library;
    if (!st_.wall.first_candidate_s && r.measure_ms > 0) st_.wall.first_candidate_s = elapsed_s();
  }
  if (derived_) record_pruned(runs);
}

void Optimizer::update_frontier() {
  // The best correct runners-up so far.
  std::vector<std::pair<double, const search::Measurement*>> ok;
  for (const auto& m : st_.history)
    if (m.median_ms && m.status == search::CandidateStatus::kOk && m.candidate.id != st_.champion->candidate.id)
      ok.push_back({*m.median_ms, &m});
  std::sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  st_.frontier = util::Json::array();
  for (size_t i = 0; i < ok.size() && i < 5; ++i)
    st_.frontier.push_back({{"id", ok[i].second->candidate.id}, {"median_ms", ok[i].first}, {"methods", ok[i].second->candidate.methods}});
}

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
  Result<search::GeneratorOutput> out = internal_error("not run");
  {
    Phase p(*this, "generate");
    out = gen.generate(in);
  }
  if (!out) {
    if (auto st = write_json(idir / "generator_error.json", "generator_error", {{"message", out.error().message}}); !st) return fail(st.error());
    if (util::interrupted() || out.error().code == ExitCode::kInterrupted) return interrupted_exit();
    // A generator that failed (an endpoint down, a command that crashed) leaves the run resumable, not finished.
    return generator_stopped(out.error());
  }
  for (const auto& m : out->checked_failures) st_.history.push_back(m);
  // The model's outlook: two generations in a row that see no significant gain anywhere end the search.
  if (out->outlook) {
    // The model's figures are what the search ranks by (the weighted objective over a workload matrix).
    const double champ_ms = st_.champion->objective();
    const bool none = predicts_no_gain(*out->outlook, champ_ms, space_->dims.size());
    st_.stop.no_gain_predictions = none ? st_.stop.no_gain_predictions + 1 : 0;
    if (none)
      out->notes.push_back(fmt::format("the model predicts no significant gain: its most hopeful unmeasured configuration's "
                                       "lower bound is {:.4f} ms against the champion's {:.4f} ms ({} measured)",
                                       *out->outlook->best_lcb_ms, champ_ms, out->outlook->observations));
  }
  util::Json planned = util::Json::array();
  for (const auto& c : out->candidates) planned.push_back(search::to_json(c));
  if (auto st = write_json(idir / "plan.json", "plan",
                           {{"slots", {{"compute", in.plan.slots[Axis::kCompute]}, {"memory", in.plan.slots[Axis::kMemory]},
                                       {"latency", in.plan.slots[Axis::kLatency]}}},
                            {"selection", search::to_json(out->selection)}, {"notes", out->notes}, {"candidates", planned},
                            {"outlook", out->outlook ? util::Json{{"remaining", out->outlook->remaining},
                                                                  {"best_lcb_ms", out->outlook->best_lcb_ms ? util::Json(*out->outlook->best_lcb_ms) : util::Json(nullptr)},
                                                                  {"observations", out->outlook->observations}}
                                                     : util::Json(nullptr)}});
      !st)
    return fail(st.error());
  if (should_stop(st_.stop) == StopReason::kNoPredictedGain) {
    profile_champion(idir);
    if (auto st = save_state(); !st) return fail(st.error());
    return finish(StopReason::kNoPredictedGain, "");
  }
  if (out->candidates.empty()) {
    st_.stop = after_iteration(st_.stop, false, st_.stop.near_peak, true);
    st_.iterations_done = it;
    if (auto st = save_state(); !st) return fail(st.error());
    return std::nullopt;
  }
  // Every candidate has an id no measurement of the run has: one the generator left empty, or one the history holds
  // already (an iteration resumed after an interrupt kept what it had measured), gets the next free i<it>c<n>.
  std::set<std::string> taken;
  for (const auto& m : st_.history) taken.insert(m.candidate.id);
  size_t next = 1;
  for (auto& c : out->candidates) {
    if (!c.id.empty() && !taken.count(c.id)) {
      taken.insert(c.id);
      continue;
    }
    while (taken.count(fmt::format("i{}c{}", it, next))) ++next;
    c.id = fmt::format("i{}c{}", it, next);
    taken.insert(c.id);
  }
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
  // Every new champion's methods are ablated: what a method is worth changes with the parameters (on the H200 at
  // sgemm 4096^3, cp_async_pipeline saved 17% at the iteration-1 champion and cost 6% at a later one), and each
  // variant is a neighbour of the champion the search learns from. A variant faster than the champion is selected.
  util::Json ablation = {{"methods", util::Json::array()}, {"params", util::Json::array()}};
  std::optional<CandidateRun> adopted;
  if (champ_run) {
    std::vector<CandidateRun> variants;
    const size_t verdicts_before = st_.verdicts.size();
    auto a = ablate(*champ_run, it, idir, &variants);
    if (!a) return fail(a.error());
    record_method_outcomes(it, std::vector<search::MethodVerdict>(st_.verdicts.begin() + static_cast<long>(verdicts_before),
                                                                  st_.verdicts.end()));
    ablation = *a;
    st_.ablated_methods = champ_run->candidate.methods;
    auto ad = adopt_faster_variants(std::move(variants), it, idir / "ablation");
    if (!ad) return fail(ad.error());
    adopted = std::move(*ad);
    if (adopted) champ_run = &*adopted;
  }
  if (auto st = write_json(idir / "ablation.json", "ablation", ablation); !st) return fail(st.error());

  // ---- Profile and roofline of the new champion ----
  // The profile is evidence for choosing methods: taken when the search needs new evidence, i.e. when an iteration
  // brought no faster champion, and of a champion not profiled yet (a profile costs 15-30 s; while parameters keep
  // paying, the search goes on without one). The final champion is profiled when the run ends (finish).
  bool near_peak = st_.stop.near_peak;
  if (!sel->improved) profile_champion(idir);
  if (champ_run) {
    auto placed = place(*champ_run->outcome.timing, idir, champ_run->candidate.id);
    if (placed) near_peak = placed->near_peak();
  }
  update_frontier();
  int correct = 0;
  for (const auto& r : *runs) correct += r.status == search::CandidateStatus::kOk && r.outcome.timing ? 1 : 0;
  st_.timeline.push_back({{"iteration", it}, {"champion_id", st_.champion->candidate.id}, {"champion_ms", st_.champion->median_ms},
                          {"improved", sel->improved}, {"candidates", runs->size()}, {"correct", correct},
                          {"note", out->notes.empty() ? std::string() : out->notes.front()}});
  st_.stop = after_iteration(st_.stop, sel->improved, near_peak, false, out->exploring);
  st_.iterations_done = it;
  if (auto st = save_state(); !st) return fail(st.error());
  return std::nullopt;
}

RunOutcome optimize(OptimizeOptions opts, Lab& lab, db::RecordSink* sink, db::RecordLookup* lookup, ProgressSink progress) {
  util::set_progress_quiet(opts.quiet);  // --quiet silences the progress bars too (util/progress.h)
  Optimizer o(std::move(opts), lab, sink, lookup, std::move(progress));
  return o.run();
}

RunOutcome optimize(OptimizeOptions opts) {
  util::SystemRunner runner;
  SystemLab lab(opts.job, runner);
  auto store = db::open_for_recording(opts.no_db, opts.db_path);
  if (!store)
    util::progress_print(fmt::format("kopt optimize: warning: {}; nothing of this run is recorded", store.error().message));
  db::Store* db = store.ok() ? store->get() : nullptr;
  return optimize(std::move(opts), lab, db, db);
}

int run_optimize(OptimizeOptions opts, Lab& lab, db::RecordSink* sink, db::RecordLookup* lookup) {
  return report_outcome(optimize(std::move(opts), lab, sink, lookup));
}

}  // namespace kopt::loop
