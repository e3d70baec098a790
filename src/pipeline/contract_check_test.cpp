#include "pipeline/contract_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "testing/test_support.h"
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

}  // namespace
}  // namespace kopt::pipeline
