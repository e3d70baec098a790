// Candidates from source to evidence: compiling, the SASS check, measuring, the paired selection of finalists,
// profiles and the roofline position.
#include <condition_variable>
#include <ctime>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "compile/command.h"
#include "compile/pool.h"
#include "dispatch/dispatcher.h"
#include "loop/candidate_check.h"
#include "loop/numerics.h"
#include "loop/optimizer.h"
#include "pipeline/placement.h"
#include "pipeline/triton.h"
#include "profile/query_metrics.h"
#include "profile/report.h"
#include "roofline/svg.h"
#include "sass/mix.h"
#include "search/registry.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/strings.h"
#include "util/progress.h"

namespace kopt::loop {

namespace fs = std::filesystem;

runner::RunOutcome Optimizer::run(const std::vector<fs::path>& libs, const std::vector<const search::Candidate*>& cands,
                                  const fs::path& result, runner::RunMode mode, const fs::path& dump_cubins, bool race,
                                  const fs::path& golden) {
  runner::RunRequest req = request(libs, cands, result, mode, dump_cubins, race, golden);
  auto key = [&](const fs::path& lib) { return lib.string() + "|" + req.golden_dir.string(); };
  if (req.mode == runner::RunMode::kPaired && req.libs.size() >= 2) {
    std::lock_guard<std::mutex> lock(checked_mu_);
    req.checked_first = checked_.count(key(req.libs.front())) > 0;
  }
  auto out = lab_.run(req);
  // What passed its check here is not checked again as a race's first library (the champion).
  std::vector<fs::path> passed;
  if (out.status == runner::RunStatus::kOk && (req.mode == runner::RunMode::kCheck || req.mode == runner::RunMode::kTime) && !req.libs.empty())
    passed.push_back(req.libs.front());
  if (req.mode == runner::RunMode::kPaired && out.details.contains("libs") && out.details["libs"].is_array())
    for (size_t k = 0; k < req.libs.size() && k < out.details["libs"].size(); ++k)
      if (out.details["libs"][k].value("status", std::string()) == "ok") passed.push_back(req.libs[k]);
  if (!passed.empty()) {
    std::lock_guard<std::mutex> lock(checked_mu_);
    for (const auto& l : passed) checked_.insert(key(l));
  }
  return out;
}

runner::RunRequest Optimizer::request(const std::vector<fs::path>& libs, const std::vector<const search::Candidate*>& cands,
                                      const fs::path& result, runner::RunMode mode, const fs::path& dump_cubins, bool race,
                                      const fs::path& golden) const {
  runner::RunRequest r;
  if (triton()) {
    r.triton_kernel = prep_.kernel;
    for (const auto* c : cands) r.triton_configs.push_back(c ? pipeline::triton_config(*c) : prep_.triton_config);
    r.dump_cubin_dir = dump_cubins;
  } else {
    r.libs = libs;
  }
  r.golden_dir = golden.empty() ? prep_.golden_dir : golden;
  r.result_json = result;
  r.mode = mode;
  r.tol = prep_.tol;
  r.max_time_s = o_.max_time_s;
  r.rounds = o_.paired_rounds;
  r.race = race;
  r.timeout_s = o_.job.run_timeout_s + 4 * o_.max_time_s;
  r.slot = dispatch::current_slot();  // measuring on several GPUs: the slot this candidate's job runs on
  return r;
}

std::optional<runner::PairedComparison> Optimizer::paired(const fs::path& inc, const search::Candidate& inc_c,
                                                          const fs::path& cand, const search::Candidate& cand_c, const fs::path& out,
                                                          const fs::path& golden) {
  auto r = run({inc, cand}, {&inc_c, &cand_c}, out, runner::RunMode::kPaired, {}, !triton(), golden);
  if (r.status != runner::RunStatus::kOk || !r.details.contains("libs") || r.details["libs"].size() != 2) return std::nullopt;
  auto a = r.details["libs"][0]["samples_ms"].get<std::vector<double>>();
  auto b = r.details["libs"][1]["samples_ms"].get<std::vector<double>>();
  return runner::compare_paired(a, b);
}

compile::CompileRequest Optimizer::request_for(const search::Candidate& c, const fs::path& out_dir) const {
  return candidate_compile_request(o_.job, c, out_dir);
}

util::Json Optimizer::sass_check(const std::vector<fs::path>& binaries, const search::Candidate& c) {
  util::Json out = util::Json::object();
  // CUDA: the kernels defined in the candidate's source; Triton: every function of the cubins it compiled.
  auto analysis = lab_.analyze_sass(binaries, triton() ? std::vector<std::string>{}
                                                       : sass::kernel_names_from_source(c.source, o_.job.cutlass));
  util::Json mix = util::Json::array();
  for (const auto* f : analysis.selected_functions()) mix.push_back({{"function", f->demangled}, {"mix", sass::to_json(sass::instruction_mix(*f))}});
  out["kernels"] = mix;
  out["methods"] = util::Json::object();
  for (const auto& m : c.methods) {
    const search::Method* meth = search::find_method(m);
    if (!meth) continue;
    auto v = sass::verify_method(analysis, meth->sass);
    out["methods"][m] = v ? sass::to_json(*v) : util::Json{{"status", "tool_error"}, {"message", v.error().message}};
  }
  return out;
}

namespace {
// The candidate's own outcome in a race (a paired run of [champion, candidate]): its status, message and, when
// correct, the timing of its rounds. A run that died says so for the candidate (the worker names the library
// that broke the context; the champion was already proven).
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

search::CandidateStatus status_of(runner::RunStatus s) {
  switch (s) {
    case runner::RunStatus::kOk: return search::CandidateStatus::kOk;
    case runner::RunStatus::kTimedOut: return search::CandidateStatus::kTimedOut;
    case runner::RunStatus::kCrashed:
    case runner::RunStatus::kCudaError: return search::CandidateStatus::kCrashed;
    default: return search::CandidateStatus::kIncorrect;
  }
}
}  // namespace

Result<std::vector<CandidateRun>> Optimizer::measure_now(std::vector<search::Candidate> cands, const fs::path& iter_dir,
                                                         const std::string& what, bool budgeted) {
  std::vector<CandidateRun> runs;
  std::vector<compile::CompileRequest> reqs;
  for (auto& c : cands) {
    fs::path cdir = iter_dir / "candidates" / c.id;
    fs::create_directories(cdir);
    KOPT_TRY(write_json(cdir / "candidate.json", "candidate", search::to_json(c)));
    reqs.push_back(request_for(c, cdir));
  }
  // Compiles run on a thread while the GPU measures what is already built, in the order the builds finish
  // (Triton compiles at the first launch, inside the measuring child: everything is ready at once).
  std::vector<compile::CompileResult> builds(cands.size());
  util::Progress progress(fmt::format("  {}: candidates measured", what), cands.size());
  size_t built = triton() ? cands.size() : 0, done_count = 0;  // guarded by mu
  bool budget_said = false;                                     // guarded by mu
  std::mutex mu, sanitizer_mu;
  std::condition_variable cv;
  std::deque<size_t> ready;
  bool compiling = !triton();
  // CUDA: each built candidate's SASS analysis (cuobjdump, CPU) starts as its build ends and runs beside the
  // measuring, which never waits for it: at sgemm 4096^3 it took 1 s a candidate, the GPU's part 0.3 s (issue 16).
  // Joined after the last measurement (futures' destructors join on every other way out).
  struct SassJob {
    util::Json sass;
    double ms = 0;
  };
  std::vector<std::future<SassJob>> sass_jobs(cands.size());  // guarded by mu
  auto start_sass = [&](size_t i) {
    if (!builds[i].ok()) return;
    sass_jobs[i] = std::async(std::launch::async, [this, lib = builds[i].library, c = cands[i]] {
      auto s0 = Clock::now();
      SassJob j{sass_check({lib}, c), 0};
      j.ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
      return j;
    });
  };
  std::thread compiler;
  if (triton()) {
    for (size_t i = 0; i < cands.size(); ++i) {
      builds[i].name = cands[i].id;
      builds[i].status = compile::CompileStatus::kOk;
      builds[i].library = prep_.kernel;
      ready.push_back(i);
    }
  } else {
    say("  {}: compiling {} on {} job(s), measuring each as it is built...", what, reqs.size(),
        jobs_ > 0 ? std::to_string(jobs_) : std::string("auto"));
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < cands.size(); ++i) index[cands[i].id] = i;
    compiler = std::thread([&, index] {
      std::vector<bool> seen(cands.size(), false);
      auto all = lab_.compile(reqs, jobs_, [&](const compile::BatchProgress&, const compile::CompileResult& r) {
        auto it = index.find(r.name);
        if (it == index.end()) return;
        std::lock_guard<std::mutex> lock(mu);
        ++built;
        progress.set(done_count, fmt::format("{}/{} built", built, cands.size()));
        builds[it->second] = r;
        seen[it->second] = true;
        start_sass(it->second);
        ready.push_back(it->second);
        cv.notify_one();
      });
      std::lock_guard<std::mutex> lock(mu);
      for (size_t i = 0; i < all.size() && i < builds.size(); ++i)
        if (!seen[i]) {
          builds[i] = all[i];
          start_sass(i);
          ready.push_back(i);
        }
      compiling = false;
      cv.notify_one();
    });
  }
  struct JoinOnExit {
    std::thread& t;
    ~JoinOnExit() {
      if (t.joinable()) t.join();
    }
  } join_on_exit{compiler};
  // The next built candidate, waiting (phase "compile": the GPU idles on the compiler) when none is ready yet.
  auto next_built = [&]() -> std::optional<size_t> {
    std::unique_lock<std::mutex> lock(mu);
    if (ready.empty() && compiling) {
      Phase p(*this, "compile");
      cv.wait(lock, [&] { return !ready.empty() || !compiling; });
    }
    if (ready.empty()) return std::nullopt;
    size_t i = ready.front();
    ready.pop_front();
    return i;
  };
  std::map<size_t, CandidateRun> done;
  auto mark_done = [&](size_t i, CandidateRun cr) {
    std::lock_guard<std::mutex> lock(mu);
    done[i] = std::move(cr);
    done_count = done.size();
    progress.set(done_count, fmt::format("{}/{} built", built, cands.size()));
  };
  // Each built candidate is one job of the dispatcher: measured whole (its races at every case, its checks) on
  // one slot; on one slot, on this thread in the order the builds finish; on several, on whichever slot is free.
  std::optional<Error> failed;  // the first failure of kopt itself (a file it could not write): the run stops
  auto stop_with = [&](const Error& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!failed) failed = e;
    return dispatch::Attempt::kStop;
  };
  auto evaluate = [&](size_t i, int slot, int attempt) -> dispatch::Attempt {
    CandidateRun cr;
    cr.candidate = cands[i];
    cr.build = builds[i];
    cr.slot = slot;
    fs::path cdir = iter_dir / "candidates" / cands[i].id;
    if (auto st = write_json(cdir / "build.json", "build", compile::to_json(cr.build)); !st) return stop_with(st.error());
    if (!cr.build.ok()) {
      cr.status = search::CandidateStatus::kCompileFailed;
      cr.note = cr.build.status == compile::CompileStatus::kTimedOut
                    ? fmt::format("compile time limit: nvcc ran past {:.0f} s and was killed", o_.job.compile_timeout_s)
                    : std::string(compile::to_string(cr.build.status));
      mark_done(i, cr);
      return dispatch::Attempt::kDone;
    }
    // ptxas's resources before measuring: a point of a derived space that spills where the baseline does not is
    // pruned unmeasured (local-memory traffic in the inner loop; a spilling point is never the best of such a space).
    // Not with a flag method on (-maxrregcount trades registers for spills on purpose: it is measured).
    if (derived_ && cr.candidate.flags.empty() && compile::spilling_functions(prep_.build.resources).empty())
      if (auto sp = compile::spilling_functions(cr.build.resources); !sp.empty()) {
        cr.status = search::CandidateStatus::kCompileFailed;
        cr.note = "spills registers (ptxas), pruned before measuring: " + util::join(sp, "; ");
        mark_done(i, cr);
        return dispatch::Attempt::kDone;
      }
    if (util::interrupted()) return dispatch::Attempt::kStop;
    tick();
    if (budgeted && budget_spent()) {
      std::lock_guard<std::mutex> lock(mu);
      if (!budget_said) say("    the time budget is spent: {} of {} candidates not measured", cands.size() - done.size(), cands.size());
      budget_said = true;
      return dispatch::Attempt::kStop;
    }
    bool lost = false;  // the slot's worker died under it, with no verdict (retried elsewhere when there is one)
    {
      Phase p(*this, "measure");
      auto m0 = Clock::now();
      if (triton()) {
        cr.outcome = run({cr.build.library}, {&cr.candidate}, cdir / "run.json", runner::RunMode::kTime, cdir / "cubins");
        lost = runner::lost_worker(cr.outcome);
      } else {
        // Raced against the champion in interleaved rounds, stopped as soon as it is ranked (runner/race.h).
        auto raced = run({fs::path(st_.champion->library), cr.build.library}, {&st_.champion->candidate, &cr.candidate},
                         cdir / "run.json", runner::RunMode::kPaired, {}, true);
        lost = runner::lost_worker(raced);
        cr.outcome = raced_outcome(raced);
        if (raced.status == runner::RunStatus::kOk && cr.outcome.timing) {
          auto a = raced.details["libs"][0].value("samples_ms", std::vector<double>{});
          cr.vs_champion = runner::compare_paired(a, cr.outcome.samples_ms);
        }
      }
      cr.measure_ms = std::chrono::duration<double, std::milli>(Clock::now() - m0).count();
      cr.search_s = tick();
    }
    if (lost && attempt == 0 && slots_.size() > 1) {
      say("    {:<10} lost its worker on {} ({}): measured again on another GPU", cr.candidate.id, slot_name(slot), cr.outcome.message);
      return dispatch::Attempt::kWorkerLost;
    }
    if (triton()) {
      cr.sass = sass_check(pipeline::triton_cubins(cr.outcome.details), cr.candidate);
      if (auto st = write_json(cdir / "sass.json", "sass", cr.sass); !st) return stop_with(st.error());
    }
    if (cr.outcome.status == runner::RunStatus::kInterrupted) return dispatch::Attempt::kStop;  // no verdict
    cr.status = status_of(cr.outcome.status);
    cr.note = cr.outcome.message;
    if (cr.status == search::CandidateStatus::kOk && o_.job.numerics == search::NumericsMode::kStrict) {
      auto v = judge_strict(cr.outcome.details, baseline_result_);
      if (!v.ok) {
        cr.status = search::CandidateStatus::kIncorrect;
        cr.note = v.reason;
      }
    }
    // Correct at every case of the workload matrix, not only at the one it was raced at (issue 18); raced there
    // too when it was raced at the primary case, so the search sees the objective selection ranks by.
    // Counted as measuring (state.json phase_seconds): before, these races at the other cases were in no phase,
    // about 0.3 s a candidate at sgemm 4096^3 (a third of a 70 s search on the H200, 2026-12-01).
    if (cr.status == search::CandidateStatus::kOk && over_cases()) {
      Phase p(*this, "measure");
      const auto c0 = Clock::now();
      bool lost_at_case = false;  // as at the primary case: a worker that died with no result is no verdict yet
      auto wrong = cr.vs_champion ? race_at_cases(cr, cdir, &lost_at_case) : check_at_cases(cr, cdir, &lost_at_case);
      cr.cases_ms = std::chrono::duration<double, std::milli>(Clock::now() - c0).count();
      if (wrong) {
        if (util::interrupted()) return dispatch::Attempt::kStop;  // a check cut by Ctrl-C is not a verdict
        if (lost_at_case && attempt == 0 && slots_.size() > 1) {
          say("    {:<10} lost its worker on {} at another case ({}): measured again on another GPU", cr.candidate.id,
              slot_name(slot), *wrong);
          return dispatch::Attempt::kWorkerLost;
        }
        cr.status = search::CandidateStatus::kIncorrect;
        cr.note = *wrong;
        reject(cr.candidate.id, RejectGate::kCases, *wrong);
      }
    }
    // --sanitize all: every candidate that passed its check, not only the finalists (one at a time).
    if (cr.status == search::CandidateStatus::kOk && sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kCandidate)) {
      std::lock_guard<std::mutex> lock(sanitizer_mu);
      auto v = run_sanitizer(cr.build.library, &cr.candidate, cdir / "sanitize");
      if (auto st = write_json(cdir / "sanitize" / "verdict.json", "sanitizer", sanitize::to_json(v)); !st) return stop_with(st.error());
      if (v.rejected) {
        cr.status = search::CandidateStatus::kIncorrect;
        cr.note = "sanitizer: " + v.reason;
        reject(cr.candidate.id, RejectGate::kSanitizer, v.reason);
      }
    }
    // Faster than this GPU can run the work: not evidence (docs/GATES.md "Evidence that cannot be gamed").
    if (cr.status == search::CandidateStatus::kOk && cr.outcome.timing && sol_)
      if (auto why = roofline::below_speed_of_light(*sol_, cr.outcome.timing->median_ms)) {
        cr.status = search::CandidateStatus::kIncorrect;
        cr.note = "below_speed_of_light: " + *why;
        reject(cr.candidate.id, RejectGate::kSpeedOfLight, *why);
      }
    std::string figure = cr.note;
    if (cr.status == search::CandidateStatus::kOk && cr.outcome.timing) {
      figure = fmt::format("{:.4f} ms", cr.outcome.timing->median_ms);
      if (cr.vs_champion)
        figure += fmt::format(" ({:.3f}x the champion, 95% CI [{:.3f}, {:.3f}], {} rounds)", cr.vs_champion->median_ratio,
                              cr.vs_champion->ci95_low, cr.vs_champion->ci95_high, cr.vs_champion->rounds);
    }
    if (slots_.size() > 1) figure += " on " + slot_name(slot);
    say("    {:<10} {:<10} {}", cr.candidate.id, search::candidate_status_name(cr.status), figure);
    if (cr.measure_ms > 0) note_measured();
    mark_done(i, std::move(cr));
    return dispatch::Attempt::kDone;
  };
  dispatch::Dispatcher dispatcher({static_cast<int>(std::max<size_t>(1, slots_.size())), 2});
  {
    std::optional<Phase> p;  // several slots: the whole dispatch is the measuring phase (slots' own phases are off)
    if (slots_.size() > 1) p.emplace(*this, "measure");
    dispatcher.run(next_built, evaluate);
  }
  record_dispatch(dispatcher);
  if (compiler.joinable()) compiler.join();  // every SASS job has started
  for (auto& [i, cr] : done) {
    if (!sass_jobs[i].valid()) continue;
    SassJob j = sass_jobs[i].get();
    cr.sass = std::move(j.sass);
    cr.sass_ms = j.ms;
    if (auto st = write_json(iter_dir / "candidates" / cr.candidate.id / "sass.json", "sass", cr.sass); !st && !failed)
      failed = st.error();
  }
  for (const auto& [i, cr] : done) record_run(cr);  // measured is measured, whatever stops the run next
  if (failed) return *failed;
  for (auto& [i, cr] : done) runs.push_back(std::move(cr));  // in the generator's order
  return runs;
}

std::optional<std::string> Optimizer::race_at_cases(CandidateRun& cr, const fs::path& cdir, bool* lost) {
  std::vector<CaseCheck> checks;
  std::vector<CaseComparison> per_case;
  util::Json rec = util::Json::array();
  for (size_t i = 0; i < cases_.size(); ++i) {
    const auto& cd = cases_[i];
    if (i == primary_) {
      per_case.push_back({cd.c.name, cd.c.weight, *cr.vs_champion});
      continue;
    }
    auto raced = run({fs::path(st_.champion->library), cr.build.library}, {&st_.champion->candidate, &cr.candidate},
                     cdir / ("race_" + cd.c.name + ".json"), runner::RunMode::kPaired, {}, true, cd.golden_dir);
    if (lost) *lost = runner::lost_worker(raced);
    auto mine = raced_outcome(raced);
    checks.push_back({cd.c.name, mine.status, mine.message});
    util::Json r = {{"case", cd.c.name}, {"status", runner::status_name(mine.status)}, {"message", mine.message}};
    if (mine.status != runner::RunStatus::kOk) {
      rec.push_back(r);
      break;  // the first wrong case decides
    }
    auto champ = raced.details["libs"][0].value("samples_ms", std::vector<double>{});
    auto cmp = runner::compare_paired(champ, mine.samples_ms);
    r["comparison"] = runner::to_json(cmp);
    rec.push_back(r);
    per_case.push_back({cd.c.name, cd.c.weight, cmp});
  }
  auto v = correct_at_every_case(checks);
  util::Json j = {{"checks", rec}, {"correct", v.correct}, {"reason", v.reason}};
  if (v.correct) {
    cr.over_cases = combine_cases(per_case);
    j["objective"] = to_json(*cr.over_cases);
    if (cr.over_cases->valid) cr.objective_ms = st_.champion->objective() * cr.over_cases->geomean_ratio;
  }
  if (auto st = write_json(cdir / "cases.json", "case_checks", j); !st) say("  {}", st.error().message);
  if (v.correct) return std::nullopt;
  return v.reason;
}

Result<SelectionResult> Optimizer::select(const std::vector<CandidateRun>& runs, const fs::path& iter_dir) {
  Phase p(*this, "selection");
  SelectionResult out;
  std::vector<Contender> contenders = contenders_of(runs);
  const std::string champion_at_start = st_.champion->candidate.id;
  // A finalist's comparison with the champion at the start of this selection (its own races), over the cases.
  auto vs_start = [&](const CandidateRun& r) { return raced_comparison(r); };
  std::optional<runner::PairedComparison> crowned_vs_start;  // the new champion's, once one was crowned here
  for (const auto& f : pick_finalists(contenders, static_cast<size_t>(o_.finalists))) {
    const CandidateRun* cr = nullptr;
    for (const auto& r : runs)
      if (r.candidate.id == f.id) cr = &r;
    Contender inc{st_.champion->candidate.id, true, st_.champion->objective(), static_cast<int>(st_.champion->candidate.methods.size())};
    // A reused finalist here is one its stored figures keep behind the champion (race_reused_finalists raced the
    // others again): the champion stays, and nothing is run.
    if (cr->reused) {
      const std::string why = reused_marker(*cr->reused) + ": " + cr->reuse_reason + " (not raced again)";
      out.record.push_back({{"finalist", f.id}, {"incumbent", inc.id}, {"decision", "keep"}, {"reason", why}, {"reused", reused_json(*cr->reused)}});
      say("  {} vs {}: {}", f.id, inc.id, why);
      continue;
    }
    // A finalist that both races already put behind the champion crowned in this selection (its ratio's 95% CI
    // against the old champion entirely above the new one's) needs no new paired runs against it.
    if (auto mine = vs_start(*cr); mine && crowned_vs_start && st_.champion->candidate.id != champion_at_start &&
                                   mine->ci95_low > crowned_vs_start->ci95_high) {
      const std::string why = fmt::format(
          "slower than {}, both raced against {}: ratio {:.3f} [{:.3f}, {:.3f}] against {:.3f} [{:.3f}, {:.3f}] (no new run)",
          inc.id, champion_at_start, mine->median_ratio, mine->ci95_low, mine->ci95_high, crowned_vs_start->median_ratio,
          crowned_vs_start->ci95_low, crowned_vs_start->ci95_high);
      out.record.push_back({{"finalist", f.id}, {"incumbent", inc.id}, {"decision", "keep"}, {"reason", why}});
      say("  {} vs {}: {}", f.id, inc.id, why);
      continue;
    }
    // A candidate raced against this champion already has its comparison; otherwise (Triton, or the champion
    // changed earlier in this selection) it gets a paired run now.
    std::optional<runner::PairedComparison> cmp;
    if (cr->vs_champion && st_.champion->candidate.id == champion_at_start) cmp = cr->vs_champion;
    else cmp = paired(st_.champion->library, st_.champion->candidate, cr->build.library, cr->candidate, iter_dir / ("paired_" + f.id + ".json"));
    if (!cmp) {
      out.record.push_back({{"finalist", f.id}, {"error", "paired timing failed"}});
      continue;
    }
    // Over the workload matrix: the weighted geometric mean of the per-case ratios, regressions flagged (issue 18).
    util::Json rec = {{"finalist", f.id}, {"incumbent", inc.id}, {"comparison", runner::to_json(*cmp)}};
    SelectionOutcome d;
    if (over_cases()) {
      // Raced at every case against this champion already: that comparison; otherwise paired runs now.
      auto multi = cr->over_cases && st_.champion->candidate.id == champion_at_start ? *cr->over_cases
                                                                                      : compare_over_cases(*cr, *cmp, iter_dir);
      d = decide_over_cases(inc, f, multi, o_.gates.no_regressions);
      rec["cases"] = to_json(multi);
      rec["comparison"] = runner::to_json(multi.as_paired());
      if (!multi.regressions.empty()) {
        util::Json flag = {{"candidate", f.id}, {"iteration", st_.iterations_done + 1}, {"regressions", multi.regressions},
                           {"rejected", o_.gates.no_regressions}};
        if (!st_.gate_records.contains("flagged")) st_.gate_records["flagged"] = util::Json::array();
        st_.gate_records["flagged"].push_back(flag);
        if (o_.gates.no_regressions) reject(f.id, RejectGate::kRegression, util::join(multi.regressions, "; "));
      }
      cmp = multi.as_paired();
    } else {
      d = decide(inc, f, *cmp);
    }
    // The safety gates: a finalist that is nondeterministic, or that the sanitizer flags, never becomes champion.
    // Both run only on a finalist that would otherwise become champion: on one that stays behind they decide
    // nothing (the runner-up's determinism check was about 1 s of each H200 sgemm 4096^3 selection).
    // With --champion-gates final (the default) they run once, on the champion the search ends with
    // (verify_champion): an intermediate champion that is replaced later never needed them.
    if (d.decision == ChampionDecision::kNewChampion && o_.gates.champion_gates == ChampionGates::kEach) {
      if (auto why = determinism_gate(cr->build.library, cr->candidate, iter_dir, rec)) {
        reject(f.id, RejectGate::kDeterminism, *why);
        d.decision = ChampionDecision::kKeepIncumbent;
        d.reason = *why;
      } else if (auto unsafe = sanitizer_gate(cr->build.library, cr->candidate, iter_dir, rec, "before it can become champion")) {
        reject(f.id, RejectGate::kSanitizer, *unsafe);
        d.decision = ChampionDecision::kKeepIncumbent;
        d.reason = "sanitizer: " + *unsafe;
      } else {
        st_.verified.push_back(f.id);
      }
    } else if (d.decision == ChampionDecision::kNewChampion) {
      rec["safety_gates"] = "on the final champion (--champion-gates final)";
    }
    rec["decision"] = d.decision == ChampionDecision::kNewChampion ? "new_champion" : "keep";
    rec["reason"] = d.reason;
    out.record.push_back(rec);
    say("  {} vs {}: {} (time ratio {:.3f}, 95% CI [{:.3f}, {:.3f}], {} paired rounds) -> {}", f.id, inc.id,
        runner::describe(cmp->verdict), cmp->median_ratio, cmp->ci95_low, cmp->ci95_high, cmp->rounds, d.reason);
    if (d.decision == ChampionDecision::kNewChampion) {
      if (st_.champion->candidate.id == champion_at_start) crowned_vs_start = vs_start(*cr);
      else crowned_vs_start.reset();  // a second crowning: compared with an intermediate champion, not the start one
      const double objective = over_cases() ? st_.champion->objective() * cmp->median_ratio : 0;
      if (st_.champion->candidate.id != "baseline") st_.superseded.push_back(*st_.champion);
      st_.champion = ChampionRecord{cr->candidate, cr->build.library.string(), cr->outcome.timing->median_ms,
                                    (iter_dir / "candidates" / cr->candidate.id / "run.json").string(), objective};
      st_.wall.champion_s = elapsed_s();
      out.improved = out.improved || cmp->verdict == runner::Verdict::kFaster;
    }
  }
  KOPT_TRY(write_json(iter_dir / "selection.json", "selection", {{"finalists", out.record}}));
  return out;
}

// The profile cache's key (docs/PROFILING.md "The profile cache"): what the profile measures (the library's bytes,
// or the Triton kernel's source and configuration; the golden data's request; the plan it starts from; the top-N),
// and where (the GPU, the driver, ncu). Empty when the library cannot be read.
std::string Optimizer::profile_key(const fs::path& lib, const search::Candidate* c) const {
  util::Hasher h;
  h.add("kopt-profile-1");
  if (triton()) {
    auto text = util::read_file(prep_.kernel);
    if (!text) return "";
    h.add(*text).add((c ? pipeline::triton_config(*c) : prep_.triton_config).dump());
  } else {
    auto bytes = util::read_file(lib);
    if (!bytes) return "";
    h.add(*bytes);
  }
  const auto& m = prep_.manifest;
  h.add(m.contains("golden_cache") ? m["golden_cache"].value("key", std::string()) : std::string());
  h.add(m.value("dims", util::Json::object()).dump()).add(m.value("buffers", util::Json::array()).dump());
  h.add(profile::to_json(plan_).dump()).add(std::to_string(o_.ncu_num));
  const auto meta = util::meta_info();
  h.add(gpu_.name).add(meta.driver).add(meta.ncu);  // the model, not the unit: a profile counts the same on both
  return h.hex();
}

Result<std::map<std::string, double>> Optimizer::profile(const fs::path& lib, const search::Candidate* c, const fs::path& out_dir,
                                                        const std::string& name) {
  Phase p(*this, "profile");
  // The same library, golden data, plan, GPU and tools profiled before: its metrics, summary and plan from the
  // cache, the entry named in out_dir (KOPT_PROFILE_CACHE=off profiles every time).
  const auto cache = lab_.profile_cache_dir();
  const std::string key = cache ? profile_key(lib, c) : std::string();
  if (!key.empty())
    if (auto j = util::read_json(*cache / (key + ".json")); j && j->is_object() && j->contains("metrics"))
      if (auto plan = profile::plan_from_json(j->value("plan", util::Json())); plan) {
        plan_ = *plan;
        st_.profile_plan = profile::to_json(plan_);
        std::error_code ec;
        fs::create_directories(out_dir, ec);
        KOPT_TRY(util::write_file_atomic(out_dir / (name + "_summary.txt"), j->value("summary", std::string())));
        KOPT_TRY(write_json(out_dir / (name + "_profile_cached.json"), "profile_cached",
                            {{"entry", (*cache / (key + ".json")).string()}, {"made", j->value("made", std::string())},
                             {"run_dir", j->value("run_dir", std::string())}}));
        say("  profile of {}: from the cache (made {}; KOPT_PROFILE_CACHE=off profiles again)", name,
            j->value("made", std::string("?")));
        return j->at("metrics").get<std::map<std::string, double>>();
      }
  util::Progress progress("  profiling " + name + " (Nsight Compute)");
  runner::RunRequest rr;
  if (triton()) {
    rr.triton_kernel = prep_.kernel;
    rr.triton_configs = {c ? pipeline::triton_config(*c) : prep_.triton_config};
  } else {
    rr.libs = {lib};
  }
  rr.golden_dir = prep_.golden_dir;
  rr.result_json = out_dir / (name + "_profile_run.json");
  rr.mode = runner::RunMode::kProfile;
  rr.tol = prep_.tol;
  profile::ProfileRequest req;
  req.target_argv = runner::child_argv(rr);
  req.out_dir = out_dir;
  req.name = name;
  req.ncu_path = toolchain::find_ncu();
  req.chip = profile::chip_for_compute_capability(gpu_.cc_major, gpu_.cc_minor);
  KOPT_TRY_ASSIGN(auto r, lab_.profile(req, plan_, o_.ncu_num));
  st_.profile_plan = profile::to_json(plan_);
  std::map<std::string, double> metrics;
  for (const auto& [k, v] : r.aggregate.metrics)
    if (v.value) metrics[k] = pipeline::ncu_to_base_units(*v.value, v.unit);
  const std::string summary = profile::format_summary(r, o_.ncu_num);
  KOPT_TRY(util::write_file_atomic(out_dir / (name + "_summary.txt"), summary));
  if (!key.empty()) {
    // Under the key of the plan it started from, the plan it ended with (an adaptive first profile fixes it).
    std::error_code ec;
    fs::create_directories(*cache, ec);
    std::time_t now = std::time(nullptr);
    char made[32];
    std::strftime(made, sizeof made, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    if (auto st = util::write_file_atomic(*cache / (key + ".json"),
                                          util::Json{{"metrics", metrics}, {"summary", summary}, {"plan", profile::to_json(plan_)},
                                                     {"made", made}, {"run_dir", dir_.string()}}
                                              .dump(1));
        !st)
      say("  the profile was not cached: {}", st.error().message);
  }
  return metrics;
}

Result<roofline::RooflineResult> Optimizer::place(const runner::TimingStats& t, const fs::path& out_dir, const std::string& label) {
  roofline::AnalyzeOptions ao;
  ao.near_peak_efficiency = o_.near_peak_efficiency;
  ao.budget.total = o_.budget_total;
  ao.budget.max_per_axis = o_.budget_per_axis;
  KOPT_TRY_ASSIGN(auto r, pipeline::place(*ceilings_, prep_.manifest, prep_.buffer_dtypes, t, st_.metrics, label, ao));
  st_.roofline = roofline::to_json(r);
  KOPT_TRY(write_json(out_dir / "roofline.json", "roofline", st_.roofline));
  std::vector<roofline::SvgPoint> pts;
  if (auto pt = roofline::svg_point(r)) pts.push_back(*pt);
  KOPT_TRY(util::write_file_atomic(out_dir / "roofline.svg", roofline::render_svg(*ceilings_, pts)));
  return r;
}

std::map<Axis, int> Optimizer::budget_from_roofline() const {
  std::map<Axis, int> slots;
  for (Axis a : kAllAxes) slots[a] = 0;
  if (st_.roofline.contains("budget") && st_.roofline["budget"].contains("methods"))
    for (Axis a : kAllAxes) slots[a] = st_.roofline["budget"]["methods"].value(std::string(axis_name(a)), 0);
  return slots;
}

}  // namespace kopt::loop
