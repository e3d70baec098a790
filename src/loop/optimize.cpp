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
  if (!o_.resume) lab_.start_early_work(derived_ ? std::optional<std::string>(derived_->instrumented) : std::nullopt);
  auto contract_failed = [&]() -> std::optional<RunOutcome> {
    if (!contract.valid()) return std::nullopt;
    Status st = contract.get();
    if (st) return std::nullopt;
    lab_.stop_early_work();
    util::note_failure(st.error().message);
    return outcome(RunEnd::kInputError, st.error(), "kopt optimize: " + st.error().message + "\n");
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
  prune_uncovered();
  pin_untaken();
  plan_warm_start();

  std::unique_ptr<search::Generator> gen;
  util::SystemRunner generator_runner;
  if (o_.generator.kind == GeneratorKind::kBuiltin) {
    gen = std::make_unique<search::BuiltinGenerator>();
  } else if (o_.generator.kind == GeneratorKind::kLlm) {
    auto g = search::make_llm_generator(o_.llm, false, nullptr);  // the command line checked the endpoint
    if (!g) return generator_stopped(g.error());
    gen = std::move(g).value();
  } else if (o_.generator.kind == GeneratorKind::kManual) {
    search::ManualOptions mo;
    mo.timeout_s = o_.manual_timeout_s;
    gen = std::make_unique<search::ManualGenerator>(mo);
  } else {
    search::ExternalOptions eo;
    eo.timeout_s = o_.generator_timeout_s;
    gen = std::make_unique<search::ExternalGenerator>(o_.generator.command, generator_runner, eo);
  }
  while (true) {
    tick();
    StopReason why = should_stop(st_.stop);
    if (why != StopReason::kNone) {
      // The ephemeral seed, then the held-out shapes' golden data, beside the champion's checks, which time nothing
      // (issue 36; the lab waits for them before anything it times or profiles: a fallback's races, the profile, the
      // held-out shapes' timings).
      begin_after_search();
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
  in.k = batch_for(st_.stop, branches_for(o_), o_.branches > 0);  // half a batch to confirm near peak at the roof
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

}  // namespace kopt::loop
