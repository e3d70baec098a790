#include "loop/triton_precompile.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
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

TEST(TritonPrecompile, TheDefaultCacheIsWhereTritonLooksFromTheEnvironment) {
  auto from = [](std::map<std::string, std::string> vars) {
    return triton_default_cache_dir([vars](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  EXPECT_EQ(from({{"TRITON_CACHE_DIR", "/c"}, {"TRITON_HOME", "/t"}, {"HOME", "/h"}}), std::filesystem::path("/c"));
  EXPECT_EQ(from({{"TRITON_CACHE_DIR", ""}, {"TRITON_HOME", "/t"}, {"HOME", "/h"}}), std::filesystem::path("/t/.triton/cache"));
  EXPECT_EQ(from({{"HOME", "/h"}}), std::filesystem::path("/h/.triton/cache"));
  EXPECT_EQ(from({}), std::nullopt);
}

TEST(TritonPrecompile, ACandidatesCacheEntriesAreCopiedWholeAndWhatTheCacheHasIsKept) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / ("kopt_triton_cache_copy_" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto write = [](const fs::path& f, const std::string& text) {
    fs::create_directories(f.parent_path());
    std::ofstream(f) << text;
  };
  const fs::path from = root / "candidates" / "i1c2" / "triton_cache", to = root / "home" / ".triton" / "cache";
  write(from / "KEYA" / "geglu.cubin", "cubin a");
  write(from / "KEYA" / "__grp__geglu.json", "{}");
  write(from / "KEYB" / "geglu.cubin", "cubin b");
  write(from / "stray.lock", "");          // not an entry: left alone
  write(to / "KEYB" / "geglu.cubin", "mine");  // the cache has it: kept as it is

  EXPECT_EQ(copy_triton_cache_entries(from, to), 1u);
  auto read = [](const fs::path& f) {
    std::ifstream in(f);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(to / "KEYA" / "geglu.cubin"), "cubin a");
  EXPECT_TRUE(fs::exists(to / "KEYA" / "__grp__geglu.json"));
  EXPECT_EQ(read(to / "KEYB" / "geglu.cubin"), "mine");
  EXPECT_FALSE(fs::exists(to / "stray.lock"));
  for (const auto& e : fs::directory_iterator(to)) EXPECT_EQ(e.path().extension(), "") << "no half-copied entry left: " << e.path();
  EXPECT_EQ(copy_triton_cache_entries(from, to), 0u) << "a second copy finds every entry there";
  EXPECT_EQ(copy_triton_cache_entries(root / "missing", to), 0u);
  EXPECT_TRUE(fs::exists(from / "KEYA" / "geglu.cubin")) << "the candidate keeps its own (its SASS check reads it)";
  fs::remove_all(root);
}

}  // namespace
}  // namespace kopt::loop
