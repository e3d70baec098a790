#include "loop/triton_precompile.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <thread>

namespace kopt::loop {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

TEST(TritonPrecompile, OneChildACoreNoMoreThanTheCandidatesAndTheMemoryHold) {
  // An H100 machine: 16 cores, 120 GiB free, 80 GiB of GPU memory, liger_geglu's 384 MiB working set.
  EXPECT_EQ(triton_precompile_jobs(12, 0, 16, 120 * kGiB, 80 * kGiB, 384ull << 20), 12);
  EXPECT_EQ(triton_precompile_jobs(30, 0, 16, 120 * kGiB, 80 * kGiB, 384ull << 20), 16);  // the cores
  EXPECT_EQ(triton_precompile_jobs(30, 4, 16, 120 * kGiB, 80 * kGiB, 384ull << 20), 4);   // --compile-jobs 4
  EXPECT_EQ(triton_precompile_jobs(30, 0, 16, 9 * kGiB, 80 * kGiB, 384ull << 20), 4);     // host memory: 2 GiB a child
  // Half the GPU's memory at 9 GiB a child (8 GiB of buffers and the context): 40 / 9.
  EXPECT_EQ(triton_precompile_jobs(30, 0, 16, 120 * kGiB, 80 * kGiB, 8 * kGiB), 4);
  EXPECT_EQ(triton_precompile_jobs(30, 0, 16, 120 * kGiB, 80 * kGiB, 60 * kGiB), 1);  // never below one
  EXPECT_EQ(triton_precompile_jobs(30, 0, 16, 0, 0, 0), 16);                          // unknown memory: no limit
}

TEST(TritonPrecompile, OnlyKoptTritonPrecompileTurnsItOn) {
  ::unsetenv("KOPT_TRITON_PRECOMPILE");
  EXPECT_FALSE(triton_precompile_on());  // off by default until it has run on a GPU
  for (const char* on : {"1", "on"}) {
    ::setenv("KOPT_TRITON_PRECOMPILE", on, 1);
    EXPECT_TRUE(triton_precompile_on()) << on;
  }
  for (const char* off : {"0", "off", ""}) {
    ::setenv("KOPT_TRITON_PRECOMPILE", off, 1);
    EXPECT_FALSE(triton_precompile_on()) << off;
  }
  ::unsetenv("KOPT_TRITON_PRECOMPILE");
}

TEST(TritonPrecompile, OneCandidateIsNotCompiledAhead) {
  // Its measuring child would compile it as soon, with nothing to do beside it.
  EXPECT_EQ(triton_precompile_jobs(1, 0, 16, 120 * kGiB, 80 * kGiB, 0), 0);
  EXPECT_EQ(triton_precompile_jobs(0, 0, 16, 120 * kGiB, 80 * kGiB, 0), 0);
}

TEST(TritonPrecompile, RunEachRunsEveryRequestAtMostJobsAtOnceAndKeepsTheirOrder) {
  std::vector<runner::RunRequest> reqs(9);
  for (size_t i = 0; i < reqs.size(); ++i) reqs[i].result_json = "r" + std::to_string(i) + ".json";
  std::atomic<int> in_flight{0}, most{0}, calls{0};
  auto outs = run_each(reqs, 3, [&](size_t i, const runner::RunRequest& r) {
    EXPECT_EQ(&r, &reqs[i]);
    const int now = ++in_flight;
    for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {}
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --in_flight;
    ++calls;
    runner::RunOutcome o;
    o.status = r.result_json == "r4.json" ? runner::RunStatus::kTimedOut : runner::RunStatus::kOk;
    o.message = r.result_json.string();
    return o;
  });
  EXPECT_EQ(calls.load(), 9);
  EXPECT_EQ(most.load(), 3) << "three at once, and never more";
  ASSERT_EQ(outs.size(), 9u);
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(outs[i].message, "r" + std::to_string(i) + ".json");
  EXPECT_EQ(outs[4].status, runner::RunStatus::kTimedOut);  // a failure is its request's outcome; the rest go on
  EXPECT_TRUE(run_each({}, 4, [](size_t, const runner::RunRequest&) { return runner::RunOutcome{}; }).empty());
}

}  // namespace
}  // namespace kopt::loop
