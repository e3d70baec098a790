#include "pipeline/prepare.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "compile/pool.h"
#include "contract/golden_maker.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/memfd.h"

namespace kopt::pipeline {
namespace {

namespace fs = std::filesystem;

// The three tests below: vector_add at n=1000 over a fresh golden cache and build cache (the variables set for the
// test, unset after), skipped without python3, the harness or nvcc (prepare compiles first).
class PrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (toolchain::find_python().empty() || toolchain::python_harness_dir().empty())
      GTEST_SKIP() << "python3 or the harness not found";
    if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "nvcc not found (prepare compiles first)";
    d = fs::path(::testing::TempDir()) /
        ("kopt_prepare_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    ::setenv("KOPT_GOLDEN_CACHE", (d / "golden_cache").c_str(), 1);
    ::setenv("KOPT_CACHE_DIR", (d / "cache").c_str(), 1);
    const fs::path ex = fs::path(testing_support::source_dir()) / "examples" / "vector_add";
    job.kernel = ex / "kernel.cu";
    job.ref = ex / "ref.py";
    job.dims = {{"n", 1000}};
    job.seeds = 1;
  }
  void TearDown() override {
    ::unsetenv("KOPT_GOLDEN_CACHE");
    ::unsetenv("KOPT_CACHE_DIR");
    if (!d.empty()) fs::remove_all(d);
  }
  fs::path d;
  KernelJob job;
  util::SystemRunner sys;
};

// kopt bench's golden data (want_ephemeral): where the golden cache lacks it, the harness that makes it is kept open
// for the ephemeral seed (docs/GATES.md "The ephemeral seed"); where the cache has it, no harness runs and none is made.
TEST_F(PrepareTest, TheHarnessThatMakesTheGoldenDataMakesTheEphemeralSeedOnlyWhenItRuns) {
  job.seeds = 2;
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
}

// A golden cache entry the run's own harness made moments ago is said to be made by this run, not found in the cache.
// kopt optimize builds the baseline beside the hardware gate (SystemLab::start_early_work) into the build cache:
// prepare() takes that entry and reports the early build's own nvcc time (the candidates' compile limit is 10x it),
// not a cache hit; an early build that was itself a cache hit stays one.
TEST_F(PrepareTest, TheBuildMadeBesideTheGateIsReportedAsBuiltWithItsOwnTime) {
  std::vector<std::string> said;
  auto say = [&](const std::string& s) { said.push_back(s); };
  auto early = compile::compile_batch({compile_request(job, "kernel", job.kernel, d / "early" / "build")}, {1, ""}, sys).front();
  ASSERT_TRUE(early.ok()) << early.log_text;
  ASSERT_FALSE(early.cache_hit);
  auto p = prepare(job, d / "run", sys, false, say, false, &early);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->build.cache_hit);
  EXPECT_DOUBLE_EQ(p->build.compile_ms, early.compile_ms);
  EXPECT_TRUE(fs::exists(p->build.library)) << "delivered into the run's own build folder";
  auto has = [&](const std::string& text) {
    return std::any_of(said.begin(), said.end(), [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("built in") && has("(beside the hardware gate)"));
  // A warm run: the early build was a cache hit, and so is prepare's.
  said.clear();
  auto warm = compile::compile_batch({compile_request(job, "kernel", job.kernel, d / "early2" / "build")}, {1, ""}, sys).front();
  ASSERT_TRUE(warm.cache_hit);
  auto q = prepare(job, d / "run2", sys, false, say, false, &warm);
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_TRUE(q->build.cache_hit);
  EXPECT_TRUE(has("cache hit") && !has("beside the hardware gate"));
}

// A derived space's annotated copy, built early from the lab's staging folder and then by prepare() from the run
// directory: the same text and the same -I (with_instrumented_copy), so the same cache entry.
TEST_F(PrepareTest, ADerivedCopyBuiltFromTheStagingFolderIsTheRunDirectorysBuild) {
  auto text = util::read_file(job.kernel);
  ASSERT_TRUE(text.ok());
  const std::string copy_text = "// kopt: an annotated copy\n" + *text;
  for (const char* where : {"staging/derived", "run/derived"})
    ASSERT_TRUE(util::write_file_atomic(d / where / "kernel.cu", copy_text).ok());
  const KernelJob early_job = with_instrumented_copy(job, d / "staging" / "derived" / "kernel.cu");
  EXPECT_EQ(early_job.include_dirs.back(), fs::absolute(job.kernel).parent_path().string());
  auto early = compile::compile_batch({compile_request(early_job, "kernel", early_job.kernel, d / "staging" / "build")}, {1, ""}, sys).front();
  ASSERT_TRUE(early.ok()) << early.log_text;
  auto p = prepare(with_instrumented_copy(job, d / "run" / "derived" / "kernel.cu"), d / "run", sys, false, [](const std::string&) {},
                   false, &early);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->build.cache_key, early.cache_key);
  EXPECT_FALSE(p->build.cache_hit) << "reported as the early build, not as a hit";
}

// A derived Triton space runs kopt's instrumented copy of kernel.py from the run directory, a new path each run; its
// golden data comes from setup(), which the copy leaves as it is. Keyed by the copy, no run found the golden data the
// run before made, nor what the lab's harness made beside the hardware gate from the user's file (H100, 2026-12-05:
// 10-18 s of a Triton corpus run's gates waited for data made twice). Keyed by the user's file, every copy's is one.
TEST(WithInstrumentedCopy, ATritonCopysGoldenDataIsTheUsersKernelsWhateverRunMadeIt) {
  const fs::path d = fs::path(::testing::TempDir()) / ("kopt_golden_source_" + std::to_string(::getpid()));
  fs::remove_all(d);
  const fs::path ex = fs::path(testing_support::source_dir()) / "examples" / "corpus" / "liger_geglu";
  KernelJob job;
  job.kernel = ex / "kernel.py";
  job.ref = ex / "ref.py";
  job.dims = {{"n_rows", 64}, {"n_cols", 128}};
  auto text = util::read_file(job.kernel);
  ASSERT_TRUE(text.ok());
  std::vector<std::string> keys, copy_keys;
  for (const char* run : {"run_1", "run_2"}) {
    const fs::path copy = d / run / "derived" / "kernel.py";
    ASSERT_TRUE(util::write_file_atomic(copy, "# kopt: an annotated copy\n" + *text).ok());
    const KernelJob derived = with_instrumented_copy(job, copy);
    EXPECT_EQ(derived.kernel, copy) << "the copy is what runs";
    EXPECT_TRUE(derived.include_dirs.empty()) << "a Triton job gets no -I";
    EXPECT_EQ(golden_source(derived), job.kernel);
    EXPECT_EQ(golden_source(with_instrumented_copy(derived, copy)), job.kernel) << "a copy of a copy: still the user's";
    contract::GoldenRequest g;
    g.ref_py = job.ref;
    g.dims = job.dims;
    g.out_dir = d / run / "golden";
    g.triton_kernel = golden_source(derived);
    auto key = contract::golden_key(contract::harness_argv(g, "python3"));
    ASSERT_TRUE(key.ok()) << key.error().message;
    keys.push_back(*key);
    g.triton_kernel = derived.kernel;
    auto by_copy = contract::golden_key(contract::harness_argv(g, "python3"));
    ASSERT_TRUE(by_copy.ok()) << by_copy.error().message;
    copy_keys.push_back(*by_copy);
  }
  EXPECT_EQ(keys[0], keys[1]);
  EXPECT_NE(copy_keys[0], copy_keys[1]) << "the test's premise: keyed by the copy, each run's data is its own";
  EXPECT_EQ(golden_source(job), job.kernel) << "no copy: the kernel itself";
  fs::remove_all(d);
}

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

