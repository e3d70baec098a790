#pragma once
// The optimize loop's internals (not part of the library's interface; optimize.h is). One class, its methods grouped
// by stage into files, each section below naming its file; loop/candidate_run.h holds the types the files share.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/store.h"
#include "dispatch/dispatcher.h"
#include "loop/candidate_run.h"
#include "loop/decisions.h"
#include "loop/holdout.h"
#include "loop/lab.h"
#include "loop/options.h"
#include "loop/outcome.h"
#include "loop/per_shape.h"
#include "loop/reuse.h"
#include "loop/run_clock.h"
#include "loop/state.h"
#include "pipeline/db_record.h"
#include "profile/plan.h"
#include "roofline/analysis.h"
#include "roofline/speed_of_light.h"
#include "runner/launch.h"
#include "search/derive.h"
#include "search/registry.h"
#include "search/space.h"
#include "util/progress.h"
#include "workload/working_set.h"

namespace kopt::loop {

class Optimizer {
 public:
  // `sink`, `lookup`: the results database measurements go to and are reused from (docs/DATABASE.md; nullptr: none).
  // `progress`: where the loop's progress lines go (empty: util::progress_print, above a progress bar; --quiet: none).
  Optimizer(OptimizeOptions o, Lab& lab, db::RecordSink* sink = nullptr, db::RecordLookup* lookup = nullptr,
            ProgressSink progress = {})
      : o_(std::move(o)), lab_(lab), sink_(sink), lookup_(lookup), progress_(std::move(progress)) {}
  // How the run ended (loop/outcome.h); everything it learns lands in the run directory.
  RunOutcome run();

 private:
  // ---- the inputs, the run directory, the gates (gates.cpp; the gates on the baseline: baseline_gates.cpp) ----
  std::optional<RunOutcome> check_inputs();  // how the run ends when the inputs are unusable
  // After the hardware gate: the measuring slots --gpus/--ray select (issue 21), given to the lab.
  std::optional<RunOutcome> choose_slots(const HardwareGate& hw);
  std::string slot_name(int slot) const;
  // A measure() dispatch's per-slot figures, added to st_.measuring (the summary's "Measuring" table).
  void record_dispatch(const dispatch::Dispatcher& d);
  std::vector<SlotInfo> slots_;  // empty until choose_slots(): one slot
  std::optional<RunOutcome> check_hardware();  // the hardware gate's check, before anything is written
  std::optional<RunOutcome> open_run_dir();  // new, or the one --resume names
  std::optional<RunOutcome> pass_gates();    // hardware, golden data, ceilings, correctness, timing, profile
  struct BaselineGates;  // pass_gates()'s steps (baseline_gates.cpp)
  // ---- the algorithm (optimize.cpp), an iteration (iteration.cpp), the history and the database (records.cpp) ----
  std::optional<RunOutcome> iterate(search::Generator& gen);
  // After selection (iteration.cpp): the new champion's ablation (champ_run then the variant crowned, if one is), then
  // its profile, roofline position, the timeline and the stop state.
  Status ablate_champion(const CandidateRun*& champ_run, std::optional<CandidateRun>& adopted, int it,
                        const std::filesystem::path& idir);
  Status close_iteration(const CandidateRun* champ_run, const std::vector<CandidateRun>& runs, const SelectionResult& sel,
                         const search::GeneratorOutput& out, int it, const std::filesystem::path& idir);
  search::GeneratorInput generator_input(int iteration, const std::filesystem::path& iter_dir) const;
  void record_history(const std::vector<CandidateRun>& runs, int iteration);
  // A measured candidate (or ablation variant) into the results database: measure() records each it measured.
  void record_run(const CandidateRun& r);
  // One measured configuration into the results database (sink_); a failure is a warning, never a failed run.
  void record_measured(const search::Candidate& c, const runner::RunOutcome& outcome, runner::RunMode mode, db::Verdict verdict,
                       const std::string& note, const std::vector<compile::KernelResources>& resources,
                       const util::Json& raced = nullptr);
  // What every record of the run shares (made once, after prepare()); false when the kernel cannot be read.
  bool ensure_record_context();
  // ---- reuse (reuse.cpp beside evaluate.cpp: loop/reuse_loop.cpp) ----
  // The key a measurement of `c` in this run would get (its timing method: the baseline's); nullopt: no context.
  std::optional<db::RecordKey> lookup_key(const search::Candidate& c);
  // The record that stands for `c` (decide_reuse), as a run; nullopt: measure it.
  std::optional<CandidateRun> reused_run(const search::Candidate& c, const std::filesystem::path& iter_dir, ReuseMode mode);
  // Reused finalists that could be crowned measured again, in full (decide_race), in place in `runs`.
  Status race_reused_finalists(std::vector<CandidateRun>& runs, const std::filesystem::path& iter_dir);
  std::vector<Contender> contenders_of(const std::vector<CandidateRun>& runs);  // earlier runs' champions marked
  // An earlier run's final champion under `c`'s key (newest mark; cached), and this run's into the database (finish()).
  std::optional<db::ChampionMark> stored_champion(const search::Candidate& c);
  void record_champion();
  std::map<std::string, std::optional<db::ChampionMark>> stored_champions_;  // key_hash -> newest mark
  Result<search::GeneratorOutput> propose(search::Generator& gen, const search::GeneratorInput& in);  // loop/proposals.h
  // ---- the warm start and the strategy memory (issue 39 item 2(b), 2(c): loop/warm_start_loop.cpp) ----
  void plan_warm_start();  // before the first iteration: the nearest shapes' best configurations (loop/warm_start.h)
  // The generated candidates that are warm-start points: each point's candidate_id, the first time it is proposed.
  void note_warm_start(const std::vector<search::Candidate>& cands);
  std::map<std::string, double> strategy_memory_bonus();  // per method, at the champion's position (strategy_memory.h)
  // After an ablation: its verdicts, at the position the iteration's methods were chosen at, into the database.
  void record_method_outcomes(int iteration, const std::vector<search::MethodVerdict>& verdicts);
  std::string position_;  // the roofline position the current iteration's methods were chosen at (strategy_memory.h)
  // The race a run's record keeps (Record::raced): against which champion, at the primary case and over the cases.
  util::Json raced_json(const CandidateRun& r) const;
  void update_frontier();
  // Profiles the champion unless it was already (its metrics become the method selection's evidence).
  void profile_champion(const std::filesystem::path& iter_dir);
  void profile_deferred_baseline();  // after the search, when gate 4 deferred it (--baseline-profile after)
  // ---- evaluation (evaluate.cpp; measure.cpp, measure_candidate.cpp; selection.cpp; profiling.cpp) ----
  // `golden`: another case's golden data (empty: the run's own, prep_.golden_dir).
  runner::RunRequest request(const std::vector<std::filesystem::path>& libs, const std::vector<const search::Candidate*>& cands,
                             const std::filesystem::path& result, runner::RunMode mode,
                             const std::filesystem::path& dump_cubins = {}, bool race = false,
                             const std::filesystem::path& golden = {}) const;
  runner::RunOutcome run(const std::vector<std::filesystem::path>& libs, const std::vector<const search::Candidate*>& cands,
                         const std::filesystem::path& result, runner::RunMode mode,
                         const std::filesystem::path& dump_cubins = {}, bool race = false,
                         const std::filesystem::path& golden = {});
  std::optional<runner::PairedComparison> paired(const std::filesystem::path& incumbent, const search::Candidate& inc_c,
                                                 const std::filesystem::path& candidate, const search::Candidate& cand_c,
                                                 const std::filesystem::path& out, const std::filesystem::path& golden = {});
  // Compiles and measures `cands` (`budgeted`: within the time budget; `reuse`: a record may stand for one).
  Result<std::vector<CandidateRun>> measure(std::vector<search::Candidate> cands, const std::filesystem::path& iter_dir,
                                            const std::string& what, bool budgeted = false, ReuseMode reuse = ReuseMode::kAny);
  Result<std::vector<CandidateRun>> measure_now(std::vector<search::Candidate> cands, const std::filesystem::path& iter_dir,
                                                const std::string& what, bool budgeted);
  struct MeasureBatch;  // one measure_now() batch and its candidates' measuring (loop/measure_batch.h)
  // Why `c` is predicted infeasible (search/feasibility.h), or nullopt.
  std::optional<std::string> predicted_infeasible(const search::Candidate& c,
                                                  const std::vector<search::Measurement>& batch) const;
  compile::CompileRequest request_for(const search::Candidate& c, const std::filesystem::path& out_dir) const;
  util::Json sass_check(const std::vector<std::filesystem::path>& binaries, const search::Candidate& c);
  Result<SelectionResult> select(const std::vector<CandidateRun>& runs, const std::filesystem::path& iter_dir);
  struct SelectionSteps;  // select()'s steps (selection.cpp)
  // What a library (or the Triton kernel with c's configuration) is, as a hash: what evidence about it is cached under
  // (the profile cache, the sanitizer cache); empty when it cannot be read.
  std::string code_identity(const std::filesystem::path& lib, const search::Candidate* c) const;
  std::string profile_key(const std::filesystem::path& lib, const search::Candidate* c) const;
  // The key of a run's evidence in the evidence cache (Lab::evidence_cache_dir; what it covers: evaluate.cpp).
  std::string evidence_run_key(const runner::RunRequest& request, const std::vector<std::string>& codes,
                               const std::string& golden) const;
  HoldoutRun holdout_run(const std::filesystem::path& lib, const search::Candidate* c, const std::filesystem::path& result,
                         const std::filesystem::path& golden_dir, const std::string& golden);
  Result<std::map<std::string, double>> profile(const std::filesystem::path& lib, const search::Candidate* c,
                                                const std::filesystem::path& out_dir, const std::string& name);
  Result<roofline::RooflineResult> place(const runner::TimingStats& t, const std::filesystem::path& out_dir,
                                         const std::string& label);
  std::map<Axis, int> budget_from_roofline() const;
  // ---- shapes, safety gates (issue 18: cases, case_checks, safety_gates, verify_champion, after_search .cpp) ----
  // After prepare(): the search's cases (cases_; empty: one case). `beside`, when given, runs while the cases' golden
  // data is made in the background, where the primary case is the user's own (its golden data is prepare()'s): gate 2's
  // check at that case, which times nothing (issue 36). Its stop is prepare_cases()'s.
  std::optional<RunOutcome> prepare_cases(const std::function<std::optional<RunOutcome>()>& beside = {});
  std::optional<RunOutcome> case_golden(CaseData& cd, workload::OomPolicy& policy);  // one case's golden data
  std::optional<RunOutcome> record_cases();  // gates/cases.json and st_.gate_records["cases"] from cases_
  void choose_primary();  // primary_: the largest realised working set
  size_t primary_of(const std::vector<workload::Case>& cases) const;  // choose_primary's rule over cases
  std::optional<RunOutcome> check_baseline_at_cases();  // gate 2 at every case but the primary
  void sanitize_baseline();                      // the sanitizer gate on the baseline at a small case (recorded)
  // The same in two halves: begun (on a thread, beside the cases' correctness checks), then waited for and recorded.
  std::future<std::optional<sanitize::Verdict>> start_baseline_sanitizer();
  void record_baseline_sanitizer(std::future<std::optional<sanitize::Verdict>> running);
  // A candidate checked (or raced) at every case but the primary: the reason when it is wrong at one.
  std::optional<std::string> check_at_cases(const CandidateRun& cr, const std::filesystem::path& cdir, bool* lost);
  std::optional<std::string> race_at_cases(CandidateRun& cr, const std::filesystem::path& cdir, bool* lost);
  // A finalist against the champion at every case: the primary case's comparison and paired runs at the others.
  MultiCaseComparison compare_over_cases(const CandidateRun& cr, const runner::PairedComparison& primary,
                                         const std::filesystem::path& dir);
  // A would-be or final champion's safety gates (and the final one's ephemeral seed): the reason it may not be champion.
  std::optional<std::string> determinism_gate(const std::filesystem::path& lib, const search::Candidate& c,
                                              const std::filesystem::path& dir, util::Json& record);
  std::optional<std::string> sanitizer_gate(const std::filesystem::path& lib, const search::Candidate& c,
                                            const std::filesystem::path& dir, util::Json& record, std::string_view when);
  // The same in two halves: begun (on a thread: its tools are one-shot children, not the worker, and time nothing),
  // then waited for and recorded; an empty verdict (--sanitize leaves finalists out) passes.
  std::future<std::optional<sanitize::Verdict>> start_sanitizer_gate(const std::filesystem::path& lib, const search::Candidate& c,
                                                                     const std::filesystem::path& dir, std::string_view when);
  std::optional<std::string> record_sanitizer_gate(std::optional<sanitize::Verdict> v, const search::Candidate& c,
                                                   const std::filesystem::path& dir, util::Json& record);
  // The final champion's check on the ephemeral seed, run (ephemeral_check: nothing recorded, so that it can run beside
  // the sanitizer and count only where the sanitizer passed), then said and recorded (record_ephemeral: the reason).
  struct GateCheck {
    util::Json record;
    std::optional<std::string> why;
  };
  GateCheck ephemeral_check(const std::filesystem::path& lib, const search::Candidate& c,
                            const Result<contract::EphemeralSeedPtr>& seed, const std::filesystem::path& dir);
  std::optional<std::string> record_ephemeral(GateCheck check, const search::Candidate& c, util::Json& record);
  // --champion-gates final: the gates on the final champion; a rejected one's predecessors checked in turn (verify_champion.cpp).
  Status verify_champion(const std::filesystem::path& dir);
  std::vector<CandidateRun> fallback_pool(const ChampionRecord& back) const;  // raced against the champion it falls back to
  sanitize::Verdict run_sanitizer(const std::filesystem::path& lib, const search::Candidate* c, const std::filesystem::path& out_dir);
  // run_sanitizer on a thread (its golden data resolved first, here): the baseline's (no candidate) or a candidate's.
  std::future<std::optional<sanitize::Verdict>> sanitizer_on_thread(const std::filesystem::path& lib,
                                                                    std::optional<search::Candidate> c,
                                                                    const std::filesystem::path& out_dir);
  const std::filesystem::path& sanitize_golden();  // the sanitizer's small case's golden data, made on first use
  void reject(const std::string& id, RejectGate gate, const std::string& reason);
  // After the search: the per-case table of the baseline and the champion, and the held-out shapes.
  void final_case_table();
  void run_holdout();
  void per_shape_dispatch();  // --dispatch, after the held-out shapes (per_shape_loop.cpp; loop/per_shape.h)
  struct DispatchConfig;
  struct DispatchSteps;  // per_shape_dispatch()'s steps (loop/per_shape_steps.h)
  // Per candidate raced at every case (race_at_cases, this process): its own median at each case (cases_ order).
  std::map<std::string, std::vector<std::optional<double>>> case_medians_;
  std::mutex case_medians_mu_;
  // The held-out shapes for these search cases (--holdout-shapes FILE, else derived); `note`: what was left out.
  std::vector<workload::Case> holdout_shape_list(const std::vector<workload::Case>& search, std::string& note);
  // Golden data the run will ask for next (Lab::prefetch_golden): the matrix's cases, or held-out shapes.
  void prefetch_golden(const std::vector<workload::Case>& cases, bool holdout, bool background = false);
  // The held-out shapes run_holdout() will check (holdout_shape_list over the search's cases).
  std::vector<workload::Case> holdout_shapes(std::string& note);
  void prefetch_holdout_golden();  // their golden data, begun when the search ends (holdout_prefetched_ then)
  // The search is over: the final champion's ephemeral seed, then the held-out shapes' golden data, begun in that order.
  void begin_after_search();
  Dims ephemeral_seed_dims() const;  // the primary case's realised dims (the job's without a matrix)
  uint64_t primary_working_set_bytes() const;  // the working set at ephemeral_seed_dims() (0: unknown)
  bool holdout_prefetched_ = false;
  double target_ci_ = 0;  // a run's CI target where it is not the runner's (the held-out shapes': kHoldoutTargetCi)
  bool over_cases() const { return cases_.size() > 1; }
  // A measured run's comparison with the champion it was raced against (over the workload matrix where there is one).
  std::optional<runner::PairedComparison> raced_comparison(const CandidateRun& r) const;
  std::vector<CaseData> cases_;
  size_t primary_ = 0;  // the case races, timings and profiles run at: the largest realised working set
  std::optional<workload::WorkingSetModel> ws_model_;
  int64_t max_ws_bytes_ = 0;
  std::filesystem::path sanitize_golden_;  // the sanitizer's small case (made once)
  std::map<std::string, std::filesystem::path> libraries_;  // candidate id -> its library, as built by this process
  double sanitize_timeout_s_ = 600;
  // ---- ablation (ablation.cpp) ----
  // The champion's methods, each switched off alone, and its changed parameters, each reverted alone (ablation.json).
  Result<util::Json> ablate(const CandidateRun& champ_run, int iteration, const std::filesystem::path& iter_dir,
                            std::vector<CandidateRun>* variants = nullptr);
  struct AblationSteps;  // ablate()'s verdicts (ablation.cpp)
  // The variants an ablation measured clearly faster than the champion, selected as candidates are: the new champion.
  Result<std::optional<CandidateRun>> adopt_faster_variants(std::vector<CandidateRun> variants, int iteration,
                                                            const std::filesystem::path& iter_dir);
  // ---- run directory (run_dir.cpp: state, how the run ends; summary.cpp: the summary, the champion's files) ----
  Status write_json(const std::filesystem::path& path, const std::string& kind, const util::Json& body);
  Status save_state();
  // How the run ended, with this run directory.
  RunOutcome outcome(RunEnd end, std::optional<Error> error, std::string message) const;
  RunOutcome stop(const std::string& stage, const Error& e, util::Json tried);
  RunOutcome finish(StopReason reason, const std::string& detail);
  RunOutcome fail(const Error& e);  // a failure of kopt itself (a state file it cannot write): the run stays resumable
  RunOutcome interrupted_exit();
  // The generator failed: the run stays resumable (no stop reason), stop.json says so, the exit code is the error's.
  RunOutcome generator_stopped(const Error& e);
  Status write_champion();
  util::Json summary_json();
  Status write_summary();

  template <typename... A>
  void say(fmt::format_string<A...> f, A&&... a) {
    if (!o_.quiet) say_line(fmt::format(f, std::forward<A>(a)...));
  }
  void say_line(const std::string& line);  // to progress_, else above the progress bar; one line at a time
  using Clock = std::chrono::steady_clock;
  class Phase;  // a scope's wall time in state.phase_seconds (loop/phase.h)
  const std::thread::id main_thread_ = std::this_thread::get_id();
  mutable std::mutex state_mu_;  // st_'s clock and gate records, written from measuring slots' threads too
  std::mutex say_mu_;
  // The (library, golden directory) pairs that passed a check in this run: a race whose first library is one of
  // them does not check it again (runner::RunRequest::checked_first).
  std::set<std::string> checked_;
  std::mutex checked_mu_;
  void flush_phase(Clock::time_point now);
  bool triton() const { return prep_.backend == search::Backend::kTriton; }

  // ---- a kernel without annotations (derived.cpp): the space kopt derived, searched through its copy ----
  Status use_derived_space();  // writes run_dir/derived/<kernel> and makes it the kernel of every candidate
  void record_pruned(const std::vector<CandidateRun>& runs);  // derived points that failed, and why
  // Derived points the feasibility model predicts infeasible and the generator no longer proposes, each once.
  void record_predicted(const std::vector<search::PredictedInfeasible>& points);
  bool prune(const std::string& expr);  // adds `!(point)` to the space's constraints (false: not over its dims)
  void prune_uncovered();
  void pin_untaken();                   // when= params whose condition holds at none of the run's cases stay at their default               // covers= params: the values below their dim at the run's cases leave the space
  util::Json derived_json() const;

  OptimizeOptions o_;
  Lab& lab_;
  db::RecordSink* sink_ = nullptr;
  db::RecordLookup* lookup_ = nullptr;
  ProgressSink progress_;
  std::string timing_method_;  // the baseline's (gates/timing.json): the timing method a lookup's key names
  std::optional<pipeline::RecordContext> record_ctx_;  // made at the first record (after prepare())
  std::optional<search::Derivation> derived_;
  std::filesystem::path original_kernel_;
  util::Json pruned_ = util::Json::array();
  std::filesystem::path dir_;
  bool resuming_ = false;
  std::optional<HardwareGate> hw_;  // check_hardware()'s result, recorded in the run directory by pass_gates()
  RunState st_;
  pipeline::Prepared prep_;
  std::optional<search::SearchSpace> space_;
  const search::Registry* reg_ = nullptr;
  std::string source_text_;
  device::GpuInfo gpu_;
  std::optional<roofline::Ceilings> ceilings_;
  // The speed-of-light floor at the primary case (roofline/speed_of_light.h), with a workload model: a candidate
  // timed below it is rejected (below_speed_of_light), a baseline below it is an input error.
  std::optional<roofline::SpeedOfLight> sol_;
  profile::ProfilePlan plan_;
  util::Json baseline_result_;  // the baseline's runner result (per-seed errors for strict mode)
  std::filesystem::path triton_preload_;  // what the fork server imports first (pipeline::keep_triton_preload)
  search::Candidate base_candidate_;
  int jobs_ = 1;
  std::vector<std::pair<std::string, Clock::time_point>> phase_stack_;
  // The search's clock and the whole run's (loop/run_clock.h).
  void start_search_clock();
  double tick();  // st_.stop.search_s from the clock (returned), and st_.wall.whole_s
  bool budget_spent() const;
  std::optional<double> budget_left_s() const;  // the search budget's seconds left (nullopt: no --time-budget)
  RunClock clock_;
  double elapsed_s() const { return clock_.elapsed_s(); }
  void note_measured();  // the first candidate's measurement, when it ends
};

}  // namespace kopt::loop
