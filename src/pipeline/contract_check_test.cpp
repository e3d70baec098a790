#include "pipeline/contract_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "contract/golden_cache.h"
#include "contract/golden_maker.h"
#include "testing/counting_runner.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::pipeline {
namespace {

namespace fs = std::filesystem;

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(ContractCheck, HarnessArgvForCudaAndTriton) {
  KernelJob job;
  job.kernel = "/k/kernel.cu";
  job.ref = "/k/ref.py";
  job.dims = {{"n", 16}};
  auto a = check_argv(job, "/tmp/sig.json", ReferenceRun::kStatic);
  EXPECT_EQ(a.front(), "check");
  EXPECT_TRUE(has(a, "--signature") && has(a, "/tmp/sig.json"));
  EXPECT_TRUE(has(a, R"({"n":16})"));
  EXPECT_FALSE(has(a, "--run")) << "the static check allocates nothing";
  job.kernel = "/k/kernel.py";
  auto t = check_argv(job, "/tmp/sig.json", ReferenceRun::kOnCpu);
  EXPECT_TRUE(has(t, "--triton-kernel") && has(t, "/k/kernel.py"));
  EXPECT_FALSE(has(t, "--signature"));
  EXPECT_TRUE(has(t, "--run"));
}

TEST(ContractCheck, ChecksTheExampleWithoutAGpuAndReportsIt) {
  const std::string ex = testing_support::source_dir() + "/examples/vector_add/";
  KernelJob job;
  job.kernel = ex + "kernel.cu";
  job.ref = ex + "ref.py";
  job.dims = {{"n", 64}};
  util::SystemRunner sys;
  auto c = check_contract(job, sys, ReferenceRun::kOnCpu);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->backend, search::Backend::kCuda);
  EXPECT_EQ(c->entry, "void solve(const float* a, const float* b, float* c, int n)");
  std::string report = format_contract_report(job, *c);
  EXPECT_EQ(report.rfind("contract OK: ", 0), 0u) << report;
  if (c->harness.value("reference", std::string()) == "ran") {
    EXPECT_NE(report.find("ran once on the CPU"), std::string::npos) << report;
  }
  job.dims = {{"N", 64}};  // a wrong dimension name
  auto wrong = check_contract(job, sys, ReferenceRun::kStatic);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, ExitCode::kInput);
  EXPECT_NE(wrong.error().message.find("give --n=N"), std::string::npos) << wrong.error().message;
}

// kStaticUnlessCached: with the golden data of exactly this ref.py, signature, dims and seeds cached, no Python
// starts; any other dims (or the cache off) and the harness checks as before.
TEST(ContractCheck, TheHarnessIsSkippedOnlyWhenTheGoldenDataIsCachedForTheSameRequest) {
  if (toolchain::find_python().empty() || toolchain::python_harness_dir().empty()) GTEST_SKIP() << "python3 or the harness not found";
  const std::string ex = testing_support::source_dir() + "/examples/vector_add/";
  const fs::path root = fs::temp_directory_path() / ("kopt-contract-cached-" + std::to_string(::getpid()));
  fs::remove_all(root);
  ::setenv("KOPT_GOLDEN_CACHE", (root / "cache").c_str(), 1);
  KernelJob job;
  job.kernel = ex + "kernel.cu";
  job.ref = ex + "ref.py";
  job.dims = {{"n", 1000}};
  job.seeds = 2;
  testing_support::CountingRunner runner;
  auto before = check_contract(job, runner, ReferenceRun::kStaticUnlessCached);
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_FALSE(before->harness_skipped);
  EXPECT_EQ(runner.runs, 1);
  // The golden data made (and cached) as bench or optimize makes it.
  auto text = util::read_file(job.kernel);
  ASSERT_TRUE(text.ok());
  contract::GoldenRequest g;
  g.ref_py = job.ref;
  g.signature = contract::parse_solve_signature(*text, "kernel.cu").value();
  g.dims = job.dims;
  g.seeds = job.seeds;
  g.time_reference = false;
  g.out_dir = root / "run" / "golden";
  g.cache = contract::golden_cache_from_env().value();
  ASSERT_TRUE(contract::make_golden(g, runner).ok());
  EXPECT_EQ(runner.runs, 2);
  auto cached = check_contract(job, runner, ReferenceRun::kStaticUnlessCached);
  ASSERT_TRUE(cached.ok()) << cached.error().message;
  EXPECT_TRUE(cached->harness_skipped);
  EXPECT_EQ(runner.runs, 2) << "the harness ran although the golden data was cached";
  EXPECT_EQ(cached->entry, "void solve(const float* a, const float* b, float* c, int n)");
  // kStatic always runs it; other dims or other seeds are another request.
  ASSERT_TRUE(check_contract(job, runner, ReferenceRun::kStatic).ok());
  EXPECT_EQ(runner.runs, 3);
  job.seeds = 3;
  auto other = check_contract(job, runner, ReferenceRun::kStaticUnlessCached);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->harness_skipped);
  EXPECT_EQ(runner.runs, 4);
  job.seeds = 2;
  job.dims = {{"N", 1000}};  // a wrong dimension name is still caught: not the cached request
  auto wrong = check_contract(job, runner, ReferenceRun::kStaticUnlessCached);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, ExitCode::kInput);
  ::setenv("KOPT_GOLDEN_CACHE", "off", 1);
  job.dims = {{"n", 1000}};
  auto off = check_contract(job, runner, ReferenceRun::kStaticUnlessCached);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->harness_skipped);
  ::unsetenv("KOPT_GOLDEN_CACHE");
  fs::remove_all(root);
}

}  // namespace
}  // namespace kopt::pipeline
