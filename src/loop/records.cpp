// What the loop records of each measurement: the run's history (and the frontier of runners-up), and the results
// database (a measured configuration's record; the database never fails a run).
#include "loop/optimizer.h"
#include "runner/compare.h"
#include "util/fs.h"

namespace kopt::loop {

namespace fs = std::filesystem;

search::Measurement measurement_of(const CandidateRun& r, int iteration) {
  search::Measurement m;
  m.candidate = r.candidate;
  m.status = r.status;
  m.iteration = iteration;
  if (r.status == search::CandidateStatus::kOk && r.outcome.timing) m.median_ms = r.outcome.timing->median_ms;
  if (r.status == search::CandidateStatus::kOk) m.objective_ms = r.objective_ms;
  if (r.reused) m.reused = reused_json(*r.reused);
  // An output partly never written at the primary case: how much, for the feasibility model (search/feasibility.h).
  if (r.status != search::CandidateStatus::kOk && r.outcome.status == runner::RunStatus::kUnwrittenOutput)
    m.unwritten_fraction = runner::unwritten_share(r.outcome.message);
  if (r.predicted_infeasible) m.predicted_infeasible = r.note;
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
  // A prediction is not a measurement: a candidate the feasibility model kept from the GPU is not recorded either.
  if (r.reused || r.predicted_infeasible || r.status == search::CandidateStatus::kCompileFailed ||
      r.outcome.status == runner::RunStatus::kInterrupted)
    return;
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

// One measured configuration into the results database (sink_). A failure is a warning, said once, and ends the
// recording for the rest of the run: the database never fails a run.
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

}  // namespace kopt::loop
