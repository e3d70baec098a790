#include "compile/pool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>

#include "compile/cache.h"
#include "util/fs.h"

namespace kopt::compile {
namespace {

namespace fs = std::filesystem;

TEST(CompilePool, AutoJobs) {
  constexpr uint64_t GiB = 1ull << 30;
  EXPECT_EQ(auto_jobs(16, 128 * GiB, GiB), 16);      // cores bound
  EXPECT_EQ(auto_jobs(16, 20 * GiB, 6 * GiB), 3);    // memory bound (CUTLASS-sized jobs)
  EXPECT_EQ(auto_jobs(16, GiB / 2, 6 * GiB), 1);     // never below one
  EXPECT_EQ(auto_jobs(0, 0, GiB), 1);
  EXPECT_EQ(auto_jobs(8, 0, 0), 8);                  // no estimate: cores
  EXPECT_GE(cpu_cores(), 1u);
  EXPECT_GE(auto_jobs_for({CompileRequest{}}), 1);
}

TEST(CompilePool, ParsesMemAvailableAndJobs) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24000000 kB\nMemFree:        1 kB\nMemAvailable:   23456789 kB\n"),
            23456789ull * 1024);
  EXPECT_FALSE(parse_mem_available("MemTotal: 1 kB\n").has_value());
  EXPECT_TRUE(mem_available_bytes().has_value());  // Linux
  EXPECT_EQ(*parse_jobs("auto"), 0);
  EXPECT_EQ(*parse_jobs("4"), 4);
  for (const char* bad : {"0", "-1", "x", "4x", ""}) EXPECT_FALSE(parse_jobs(bad).ok()) << bad;
  EXPECT_EQ(format_progress({3, 8, 1, 1}), "compiled 3/8 (1 cached, 1 failed)");
}

// A stand-in nvcc (a real process, run through util::run_process): answers --version, writes the -o file,
// sleeps SLEEP=<s> seconds read from the source, fails when the source says FAIL, records its start and
// end times (ns) in <source>.interval and counts its runs in <source>.runs.
constexpr const char* kFakeNvcc = R"SH(#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.88 (fake nvcc for tests)"; exit 0; fi
out=""; src=""
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; *.cu) src="$1";; esac; shift; done
echo run >> "$src.runs"
if grep -q FAIL "$src"; then echo "$src(1): error: this declaration has no storage class or type specifier"; exit 2; fi
s=$(date +%s%N)
sleep "$(sed -n 's/.*SLEEP=\([0-9.]*\).*/\1/p' "$src")"
e=$(date +%s%N)
echo "$s $e" > "$src.interval"
echo "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'"
echo "ptxas info    : Function properties for _Z1kPf"
echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
echo "ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem"
echo "library" > "$out"
)SH";

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kopt-pool-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    nvcc_ = (root_ / "fake-nvcc").string();
    ASSERT_TRUE(util::write_file_atomic(nvcc_, kFakeNvcc).ok());
    ::chmod(nvcc_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(root_); }

  CompileRequest request(const std::string& name, const std::string& body) {
    fs::path src = root_ / "src" / name / "kernel.cu";
    EXPECT_TRUE(util::write_file_atomic(src, body).ok());
    CompileRequest r;
    r.name = name;
    r.source = src;
    r.cache_dir = root_ / "cache";
    r.out_dir = root_ / "out" / name;
    return r;
  }
  std::pair<long long, long long> interval(const CompileRequest& r) {
    std::ifstream in(r.source.string() + ".interval");
    long long s = 0, e = 0;
    in >> s >> e;
    return {s, e};
  }
  int runs(const CompileRequest& r) {
    auto t = util::read_file(r.source.string() + ".runs");
    return t ? static_cast<int>(std::count(t->begin(), t->end(), '\n')) : 0;
  }

  fs::path root_;
  std::string nvcc_;
  util::SystemRunner runner_;
};

TEST_F(PoolTest, TwoJobsRunInParallel) {
  std::vector<CompileRequest> reqs = {request("a", "// SLEEP=1\n"), request("b", "// SLEEP=1\n")};
  auto t0 = std::chrono::steady_clock::now();
  auto res = compile_batch(reqs, {2, nvcc_}, runner_);
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(res[0].ok()) << res[0].log_text;
  ASSERT_TRUE(res[1].ok()) << res[1].log_text;
  auto [a0, a1] = interval(reqs[0]);
  auto [b0, b1] = interval(reqs[1]);
  ASSERT_GT(a1, a0);
  ASSERT_GT(b1, b0);
  EXPECT_TRUE(a0 < b1 && b0 < a1) << "the two compiles' intervals do not overlap";
  EXPECT_LT(wall_s, 1.9);
}

TEST_F(PoolTest, OneJobRunsOneAtATime) {
  std::vector<CompileRequest> reqs = {request("a", "// SLEEP=0.3\n"), request("b", "// SLEEP=0.3\n")};
  auto res = compile_batch(reqs, {1, nvcc_}, runner_);
  ASSERT_TRUE(res[0].ok() && res[1].ok());
  auto [a0, a1] = interval(reqs[0]);
  auto [b0, b1] = interval(reqs[1]);
  EXPECT_TRUE(a1 <= b0 || b1 <= a0) << "one job, yet the compiles overlapped";
}

TEST_F(PoolTest, AFailedCompileKeepsItsLogAndTheBatchGoesOn) {
  std::vector<CompileRequest> reqs = {request("bad", "FAIL\n"), request("good", "// SLEEP=0\n")};
  std::vector<std::string> lines;
  auto res = compile_batch(reqs, {1, nvcc_}, runner_,
                           [&](const BatchProgress& p, const CompileResult&) { lines.push_back(format_progress(p)); });
  EXPECT_EQ(res[0].status, CompileStatus::kFailed);
  EXPECT_NE(res[0].log_text.find("error: this declaration"), std::string::npos);
  EXPECT_NE(res[0].log_text.find("# nvcc: exit 2"), std::string::npos) << res[0].log_text;
  EXPECT_EQ(res[0].log_path, reqs[0].out_dir / "compile.log");
  EXPECT_EQ(*util::read_file(res[0].log_path), res[0].log_text);
  EXPECT_TRUE(res[0].library.empty());
  EXPECT_EQ(res[1].status, CompileStatus::kOk);
  EXPECT_EQ(lines, (std::vector<std::string>{"compiled 1/2 (0 cached, 1 failed)", "compiled 2/2 (0 cached, 1 failed)"}));
  // Failures are not cached: a second batch runs nvcc again.
  compile_batch({reqs[0]}, {1, nvcc_}, runner_);
  EXPECT_EQ(runs(reqs[0]), 2);
}

TEST_F(PoolTest, ResultsResourcesAndTheCache) {
  auto req = request("c", "// SLEEP=0\n");
  auto first = compile_batch({req}, {1, nvcc_}, runner_).at(0);
  ASSERT_TRUE(first.ok()) << first.log_text;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(first.library, req.out_dir / "kernel.so");
  EXPECT_TRUE(fs::is_regular_file(first.library));
  EXPECT_TRUE(fs::is_regular_file(BuildCache(req.cache_dir).entry_dir(first.cache_key) / "kernel.so"));
  ASSERT_EQ(first.resources.size(), 1u);
  EXPECT_EQ(first.resources[0].registers, 12);
  EXPECT_EQ(first.resources[0].shared_bytes, 1024);

  // The same text elsewhere, under another name and out_dir: a hit, nvcc not run again.
  auto moved = request("c-again", "// SLEEP=0\n");
  std::vector<std::string> lines;
  auto second = compile_batch({moved}, {1, nvcc_}, runner_,
                              [&](const BatchProgress& p, const CompileResult&) { lines.push_back(format_progress(p)); });
  ASSERT_TRUE(second[0].ok());
  EXPECT_TRUE(second[0].cache_hit);
  EXPECT_EQ(second[0].cache_key, first.cache_key);
  EXPECT_EQ(runs(moved), 0);
  EXPECT_EQ(second[0].resources.size(), 1u);
  EXPECT_EQ(second[0].library, moved.out_dir / "kernel.so");
  EXPECT_EQ(lines, std::vector<std::string>{"compiled 1/1 (1 cached, 0 failed)"});

  // A define changes the key.
  auto defined = req;
  defined.defines["KOPT_VEC4"] = "1";
  auto third = compile_batch({defined}, {1, nvcc_}, runner_).at(0);
  EXPECT_FALSE(third.cache_hit);
  EXPECT_NE(third.cache_key, first.cache_key);
}

TEST_F(PoolTest, TimeoutAndMissingTool) {
  auto slow = request("slow", "// SLEEP=30\n");
  slow.timeout_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = compile_batch({slow}, {1, nvcc_}, runner_).at(0);
  EXPECT_EQ(r.status, CompileStatus::kTimedOut);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_NE(r.log_text.find("timed out"), std::string::npos) << r.log_text;

  auto missing = compile_batch({request("m", "// SLEEP=0\n")}, {1, (root_ / "no-nvcc").string()}, runner_).at(0);
  EXPECT_EQ(missing.status, CompileStatus::kToolMissing);
  EXPECT_EQ(to_string(missing.status), "tool_missing");
  EXPECT_FALSE(missing.log_text.empty());
}

// A candidate's compile time limit (issue 35): 10 times the baseline's compile, within [60 s, 600 s] (180 s floor for
// CUTLASS); a cached baseline's time is a lookup's, so the floor.
TEST(CandidateCompileLimit, FollowsTheBaselineWithinItsFloorAndCeiling) {
  EXPECT_DOUBLE_EQ(candidate_compile_limit_s(2000, false, false), 60);
  EXPECT_DOUBLE_EQ(candidate_compile_limit_s(12000, false, false), 120);
  EXPECT_DOUBLE_EQ(candidate_compile_limit_s(12000, true, false), 60);
  EXPECT_DOUBLE_EQ(candidate_compile_limit_s(12000, false, true), 180);
  EXPECT_DOUBLE_EQ(candidate_compile_limit_s(90000, false, true), 600);
}

TEST(SpillingFunctions, NamesEveryEntryThatSpills) {
  auto r = parse_ptxas_verbose(
      "ptxas info    : Compiling entry function '_Z5heavyPKfPfi' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z5heavyPKfPfi\n"
      "    200 bytes stack frame, 360 bytes spill stores, 384 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 0 barriers, 4096 bytes smem, 200 bytes cumulative stack size\n"
      "ptxas info    : Compiling entry function '_Z5lightPKfPfi' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z5lightPKfPfi\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers, 0 bytes smem, 0 bytes cumulative stack size\n");
  ASSERT_EQ(r.size(), 2u);
  auto s = spilling_functions(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], "_Z5heavyPKfPfi: 360 bytes spill stores, 384 bytes spill loads");
  EXPECT_TRUE(spilling_functions({r[1]}).empty());
}

TEST_F(PoolTest, InvalidRequestIsAFailedCandidate) {
  auto bad_arch = request("x", "// SLEEP=0\n");
  bad_arch.arch = "sm90";
  auto r = compile_batch({bad_arch}, {1, nvcc_}, runner_).at(0);
  EXPECT_EQ(r.status, CompileStatus::kFailed);
  EXPECT_NE(r.log_text.find("invalid arch 'sm90'"), std::string::npos);
  EXPECT_EQ(runs(bad_arch), 0);
}

}  // namespace
}  // namespace kopt::compile
