#pragma once
// One measure() batch (loop/measure.cpp), shared by the compiler's thread, the measuring slots and the loop: the
// candidates' builds as they finish, the queue of built ones the measuring takes from, each built candidate's SASS
// analysis beside the measuring, and the runs measured so far. Internal to the loop, as optimizer.h is.
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "dispatch/dispatcher.h"
#include "loop/optimizer.h"
#include "util/progress.h"

namespace kopt::loop {

struct Optimizer::MeasureBatch {
  MeasureBatch(Optimizer& opt, std::vector<search::Candidate> candidates, const std::filesystem::path& dir, std::string what_,
               bool budgeted_, std::vector<compile::CompileRequest> requests);
  ~MeasureBatch();  // joins the compiler's thread (the SASS futures' destructors join on every other way out)
  MeasureBatch(const MeasureBatch&) = delete;
  MeasureBatch& operator=(const MeasureBatch&) = delete;

  // CUDA: each built candidate's SASS analysis (cuobjdump, CPU) starts as its build ends and runs beside the
  // measuring, which never waits for it: at sgemm 4096^3 it took 1 s a candidate, the GPU's part 0.3 s (issue 16).
  // Joined after the last measurement (collect_sass).
  void start_sass(size_t i);
  // CUDA: the compiler's thread, filling `ready` as builds finish; Triton: everything is ready at once, once compiled
  // ahead (precompile_triton).
  void start_compiles();
  // Triton: each candidate's compile-mode child into its own Triton cache folder, several at once, before anything of
  // the batch is timed (loop/triton_precompile.h); triton_caches names the folders of those that ended well.
  void precompile_triton();
  // The next built candidate, waiting (phase "compile": the GPU idles on the compiler) when none is ready yet.
  std::optional<size_t> next_built();
  void mark_done(size_t i, CandidateRun cr);
  dispatch::Attempt stop_with(const Error& e);  // the first failure of kopt itself is kept in `failed`
  void collect_sass();                          // after the dispatch: every SASS job's result into its run
  // One built candidate measured on a slot (measure_candidate.cpp), in steps: its race (or timing) at the primary case
  // (true: its worker was lost), at the other cases, and the sanitizer; a step's Attempt ends the job.
  dispatch::Attempt measure_candidate(size_t i, int slot, int attempt);
  bool measure_at_primary(CandidateRun& cr, const std::filesystem::path& cdir);
  // A candidate of the search's batch (`budgeted`) that the feasibility model, taught by the failures measured so far
  // (this batch's included: measurement streams as builds finish), predicts infeasible: why, and it is not measured.
  std::optional<std::string> predicted_infeasible(const search::Candidate& c);
  std::optional<dispatch::Attempt> measure_at_cases(CandidateRun& cr, const std::filesystem::path& cdir, int slot, int attempt);
  std::optional<dispatch::Attempt> sanitize_candidate(CandidateRun& cr, const std::filesystem::path& cdir);

  struct SassJob {
    util::Json sass;
    double ms = 0;
  };
  Optimizer& o;
  const std::vector<search::Candidate> cands;
  const std::filesystem::path iter_dir;
  const std::string what;
  const bool budgeted;
  const std::vector<compile::CompileRequest> reqs;
  std::vector<compile::CompileResult> builds;
  std::map<std::string, std::filesystem::path> triton_caches;  // candidate id -> its compiled Triton cache folder
  util::Progress progress;
  size_t built, done_count = 0;  // guarded by mu
  bool budget_said = false;      // guarded by mu
  std::mutex mu, sanitizer_mu;
  std::condition_variable cv;
  std::deque<size_t> ready;
  bool compiling;
  std::vector<std::future<SassJob>> sass_jobs;  // guarded by mu
  std::thread compiler;
  std::map<size_t, CandidateRun> done;
  std::optional<Error> failed;  // the first failure of kopt itself (a file it could not write): the run stops
};

}  // namespace kopt::loop
