#pragma once
// The loop's CandidateChecker (search/generator.h): compiles one candidate as the loop compiles it and runs the
// correctness check on every seed (runner mode "check": no timing), so a generator that repairs candidates
// (--generator llm) hears what the compiler or the comparison said. Builds and results go under `work_dir`
// (the iteration's checks/<id>/).
#include <filesystem>

#include "compile/request.h"
#include "loop/lab.h"
#include "pipeline/prepare.h"
#include "runner/outcome.h"
#include "search/generator.h"
#include "util/process.h"

namespace kopt::loop {

// The compile request for a candidate: the job's settings, the candidate's defines and flags (-arch=sm_90a
// becomes the request's arch). The same as the loop's own builds.
compile::CompileRequest candidate_compile_request(const pipeline::KernelJob& job, const search::Candidate& c,
                                                  const std::filesystem::path& out_dir);

// Pure: what a failed build or run tells a generator. The compiler's error lines first (then the rest of its
// log), or the run's status and message (the first mismatch, the CUDA error); at most `max_chars`.
search::CheckFeedback feedback_from_build(const compile::CompileResult& build, size_t max_chars = 6000);
search::CheckFeedback feedback_from_run(const runner::RunOutcome& run, size_t max_chars = 6000);

struct CheckSetup {
  const pipeline::KernelJob* job = nullptr;
  const pipeline::Prepared* prep = nullptr;
  const util::Json* baseline_result = nullptr;  // strict numerics: the baseline's check result (judge_strict)
  Lab* lab = nullptr;  // compiles and runs the check (the measuring worker, for CUDA)
  int compile_jobs = 1;
  std::filesystem::path work_dir;
};

class LoopChecker : public search::CandidateChecker {
 public:
  explicit LoopChecker(CheckSetup s) : s_(std::move(s)) {}
  Result<search::CheckFeedback> check(const search::Candidate& c) override;

 private:
  CheckSetup s_;
};

}  // namespace kopt::loop
