#include "pipeline/prepare.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/memfd.h"

namespace kopt::pipeline {
namespace {

namespace fs = std::filesystem;

// kopt bench's golden data (want_ephemeral): where the golden cache lacks it, the harness that makes it is kept open
// for the ephemeral seed (docs/GATES.md "The ephemeral seed"); where the cache has it, no harness runs and none is made.
TEST(PrepareEphemeral, TheHarnessThatMakesTheGoldenDataMakesTheEphemeralSeedOnlyWhenItRuns) {
  if (toolchain::find_python().empty() || toolchain::python_harness_dir().empty())
    GTEST_SKIP() << "python3 or the harness not found";
  if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "nvcc not found (prepare compiles first)";
  const fs::path d = fs::path(::testing::TempDir()) / ("kopt_prepare_ephemeral_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  ::setenv("KOPT_GOLDEN_CACHE", (d / "golden_cache").c_str(), 1);
  ::setenv("KOPT_CACHE_DIR", (d / "cache").c_str(), 1);
  KernelJob job;
  const fs::path ex = fs::path(testing_support::source_dir()) / "examples" / "vector_add";
  job.kernel = ex / "kernel.cu";
  job.ref = ex / "ref.py";
  job.dims = {{"n", 1000}};
  job.seeds = 2;
  util::SystemRunner sys;
  auto quiet = [](const std::string&) {};
  {
    auto made = prepare(job, d / "first", sys, false, quiet, true);
    ASSERT_TRUE(made.ok()) << made.error().message;
    ASSERT_TRUE(made->ephemeral) << made->ephemeral_reason;
    EXPECT_GT(made->ephemeral->bytes(), 3u * 4000u) << "in.a, in.b and out.c of 1000 floats";
    EXPECT_EQ(*util::seals_of(made->ephemeral->fd()) & util::kFrozenSeals, util::kFrozenSeals);
    EXPECT_EQ(made->manifest["seeds"].size(), 2u) << "the golden data made by the same harness";
    EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
  }
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
  auto cached = prepare(job, d / "second", sys, false, quiet, true);
  ASSERT_TRUE(cached.ok()) << cached.error().message;
  EXPECT_FALSE(cached->ephemeral);
  EXPECT_NE(cached->ephemeral_reason.find("from the cache"), std::string::npos) << cached->ephemeral_reason;
  auto plain = prepare(job, d / "third", sys, false, quiet);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->ephemeral) << "only when asked";
  ::unsetenv("KOPT_GOLDEN_CACHE");
  ::unsetenv("KOPT_CACHE_DIR");
}

// A golden cache entry the run's own harness made moments ago is said to be made by this run, not found in the cache.
TEST(SayGoldenCache, AnEntryMadeAfterThisProcessStartedIsNotCalledAHitFromBefore) {
  char now[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
  EXPECT_TRUE(made_by_this_process(now));
  EXPECT_FALSE(made_by_this_process("2000-01-01T00:00:00Z"));
  EXPECT_FALSE(made_by_this_process("?"));
  std::vector<std::string> lines;
  auto say = [&](const std::string& s) { lines.push_back(s); };
  say_golden_cache({{"golden_cache", {{"hit", true}, {"made", now}, {"entry", "/c/e"}}}}, say);
  say_golden_cache({{"golden_cache", {{"hit", true}, {"made", "2000-01-01T00:00:00Z"}, {"entry", "/c/e"}}}}, say);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("made by this run's harness"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("from the cache (made 2000-01-01T00:00:00Z"), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace kopt::pipeline

