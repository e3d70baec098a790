#include "loop/candidate_check.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "loop/lab.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"

namespace kopt::loop {
namespace {

namespace fs = std::filesystem;

TEST(CandidateCheck, RunOutcomesBecomeFeedback) {
  runner::RunOutcome ok;
  ok.status = runner::RunStatus::kOk;
  EXPECT_EQ(feedback_from_run(ok).status, search::CandidateStatus::kOk);
  EXPECT_TRUE(feedback_from_run(ok).details.empty());
  runner::RunOutcome wrong;
  wrong.status = runner::RunStatus::kWrongResult;
  wrong.message = "seed 1, output C: 4194304 of 4194304 differ; first at [0, 3]: expected 12.5, got -3.25";
  auto f = feedback_from_run(wrong);
  EXPECT_EQ(f.status, search::CandidateStatus::kIncorrect);
  EXPECT_NE(f.details.find("wrong_result: "), std::string::npos) << f.details;
  EXPECT_NE(f.details.find("first at [0, 3]: expected 12.5, got -3.25"), std::string::npos);
  runner::RunOutcome fault;
  fault.status = runner::RunStatus::kCudaError;
  EXPECT_EQ(feedback_from_run(fault).status, search::CandidateStatus::kCrashed);
  runner::RunOutcome slow;
  slow.status = runner::RunStatus::kTimedOut;
  EXPECT_EQ(feedback_from_run(slow).status, search::CandidateStatus::kTimedOut);
  slow.message = std::string(10000, 'x');
  EXPECT_LT(feedback_from_run(slow, 100).details.size(), 200u);
}

// A candidate that does not compile: the checker returns nvcc's own error lines (no GPU needed).
TEST(CandidateCheck, ACompileErrorComesBackWithTheCompilersWords) {
  if (!testing_support::executable(toolchain::find_nvcc())) GTEST_SKIP() << "nvcc not found";
  fs::path dir = fs::path(::testing::TempDir()) / "kopt_candidate_check";
  fs::remove_all(dir);
  pipeline::KernelJob job;
  job.kernel = testing_support::test_data_dir() + "/search/variants/saxpy/saxpy.cu";
  pipeline::Prepared prep;
  prep.backend = search::Backend::kCuda;
  util::SystemRunner runner;
  SystemLab lab(job, runner);
  LoopChecker checker({&job, &prep, nullptr, &lab, 1, dir});
  search::Candidate c;
  c.id = "i1llm1a0";
  c.source = testing_support::test_data_dir() + "/llm/saxpy_vec4_broken.cu";
  c.defines = {{"KOPT_VECTORIZED_ACCESS", "1"}, {"THREADS", "256"}};
  auto f = checker.check(c);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->status, search::CandidateStatus::kCompileFailed);
  EXPECT_NE(f->details.find("saxpy_vec4_broken.cu(12): error: expected a \";\""), std::string::npos) << f->details;
  EXPECT_LT(f->details.find("error: expected a \";\""), f->details.find("--- the whole log"));
  EXPECT_TRUE(fs::exists(dir / "i1llm1a0"));
}

}  // namespace
}  // namespace kopt::loop
