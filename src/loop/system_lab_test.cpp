// The real lab's pieces that run without a GPU: golden data at another case's dims through the Python harness
// (the workload matrix, the sanitizer's small case and the held-out shapes each get theirs).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "contract/golden_maker.h"
#include "contract/signature.h"
#include "loop/lab.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::loop {
namespace {

namespace fs = std::filesystem;

TEST(SystemLab, GoldenDataAtAnotherCasesDimsComesFromTheHarness) {
  if (toolchain::find_python().empty()) GTEST_SKIP() << "python3 not found";
  util::SystemRunner probe;
  auto numpy = probe.run({{toolchain::find_python(), "-c", "import numpy"}});
  if (!numpy.success()) GTEST_SKIP() << "numpy not found";
  fs::path dir = fs::path(::testing::TempDir()) / ("kopt_system_lab_golden_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path data = testing_support::test_data_dir();
  pipeline::KernelJob job;
  job.kernel = data / "gates" / "tile_only" / "kernel.cu";
  job.ref = data / "gates" / "tile_only" / "ref.py";
  job.dims = {{"n", 1 << 20}};
  job.seeds = 2;
  util::SystemRunner runner;
  SystemLab lab(job, runner);
  auto m = lab.golden({{{"n", 1001}}, dir / "case"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ((*m)["dims"]["n"], 1001);
  ASSERT_TRUE((*m).contains("buffers"));
  for (const auto& b : (*m)["buffers"]) EXPECT_EQ(b["shape"], util::Json::array({1001})) << b.dump();
  EXPECT_TRUE(fs::exists(dir / "case" / "manifest.json"));
  EXPECT_TRUE(fs::exists(dir / "case" / "signature.json"));
  // An error in ref.py at a case comes back as the harness's error, not a crash.
  pipeline::KernelJob bad = job;
  bad.ref = data / "gates" / "tile_only" / "kernel.cu";
  SystemLab bad_lab(bad, runner);
  EXPECT_FALSE(bad_lab.golden({{{"n", 64}}, dir / "bad"}).ok());
}

// The end of a run whose golden data was cached (issue 36): the golden-data harness is started beside the gates all
// the same, idle (`--preload imports`: no CUDA until a request) and asked for nothing; when the search ends the
// ephemeral seed and the held-out shapes' golden data come from it, the seed first. A harness that could not start
// early costs only the old path: the seed starts one. Without a GPU: numpy, the harness on the CPU.
TEST(SystemLab, AWarmRunsHarnessWaitsIdleThenMakesTheSeedBeforeTheHeldOutShapes) {
  const std::string python = toolchain::find_python();
  if (python.empty()) GTEST_SKIP() << "python3 not found";
  util::SystemRunner probe;
  if (!probe.run({{python, "-c", "import numpy"}}).success()) GTEST_SKIP() << "numpy not found";
  // Writing to a harness that ended (killed, or never started) must not end this process: SIGPIPE ignored, as kopt's
  // main does (util::install_interrupt_handler).
  ::signal(SIGPIPE, SIG_IGN);
  const fs::path root = fs::path(::testing::TempDir()) / ("kopt_system_lab_warm_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "ref");
  // The held-out shape n = 1003 is slow: its reference waits until the test lets it go (60 s at most).
  const std::string ref = R"(import os, time
shapes = {"x": ("n",), "y": ("n",)}
def reference(*, x, y, n):
    release = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "release")
    for _ in range(600 if n == 1003 else 0):
        if os.path.exists(release):
            break
        time.sleep(0.1)
    y[:] = 2 * x
)";
  ASSERT_TRUE(util::write_file_atomic(root / "ref" / "ref.py", ref).ok());
  // The harness's python: the real one, unless ROOT/py.fail exists (the harness cannot start).
  ASSERT_TRUE(util::write_file_atomic(root / "py", "#!/bin/sh\n[ -e \"$0.fail\" ] && exit 1\nexec " + python + " \"$@\"\n").ok());
  fs::permissions(root / "py", fs::perms::owner_all);
  struct Env {  // set for this test, as it was after (ctest turns the golden cache off)
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const std::string& k, const std::string& v) {
      const char* old = std::getenv(k.c_str());
      saved.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(k.c_str(), v.c_str(), 1);
    }
    ~Env() {
      for (const auto& [k, v] : saved) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
    }
  } env;
  env.set("KOPT_CACHE_DIR", (root / "cache").string());
  env.set("KOPT_GOLDEN_CACHE", (root / "cache" / "golden").string());
  env.set("KOPT_PYTHON", (root / "py").string());
  pipeline::KernelJob job;
  job.kernel = fs::path(testing_support::test_data_dir()) / "gates" / "tile_only" / "kernel.cu";
  job.ref = root / "ref" / "ref.py";
  job.dims = {{"n", 4096}};
  job.seeds = 2;
  util::SystemRunner runner;
  {  // A cold run: the harness starts with its imports only (no CUDA before its first request, which waits for any
     // ceilings measured first: none without a GPU), its first request (the job's data) sent after them.
    SystemLab cold(job, runner);
    cold.start_early_work(std::nullopt);
    ASSERT_NE(cold.golden_stream(), nullptr);
    EXPECT_EQ(cold.golden_stream()->preload(), contract::HarnessPreload::kImports);
  }
  // The job's golden data in the cache, as start_early_work asks for it (its reference timing included).
  contract::GoldenRequest own;
  own.ref_py = job.ref;
  own.dims = job.dims;
  own.seeds = job.seeds;
  own.out_dir = root / "own";
  own.time_reference = true;
  own.cache = contract::golden_cache_from_env().value();
  own.signature = contract::parse_solve_signature(util::read_file(job.kernel).value(), job.kernel.string()).value();
  ASSERT_TRUE(contract::make_golden(own, runner).ok());

  SystemLab lab(job, runner);
  lab.start_early_work(std::nullopt);
  const contract::GoldenStream* harness = lab.golden_stream();
  ASSERT_NE(harness, nullptr) << "started on a cache hit";
  EXPECT_EQ(harness->preload(), contract::HarnessPreload::kImports) << "idle: no CUDA until a request";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the gates and the search: nothing asked of it
  EXPECT_TRUE(harness->alive());
  EXPECT_EQ(harness->requests(), 0);
  // The search is over: the seed begun, then the held-out shapes' golden data (the slow one first); the seed's
  // check waits for the seed alone.
  const auto t0 = std::chrono::steady_clock::now();
  lab.begin_ephemeral_seed(job.dims);
  lab.prefetch_golden_in_background(
      {{{{"n", 1003}}, root / "holdout" / "a", kHoldoutSeeds}, {{{"n", 1001}}, root / "holdout" / "b", kHoldoutSeeds}});
  auto seed = lab.ephemeral_seed(job.dims);
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(seed.ok()) << seed.error().message;
  EXPECT_TRUE((*seed)->to_json()["in_memory_only"].get<bool>());
  EXPECT_LT(waited_s, 45.0) << "the seed waited for the held-out shapes' golden data asked for after it";
  ASSERT_TRUE(util::write_file_atomic(root / "release", "").ok());
  lab.wait_golden_prefetch();
  EXPECT_EQ(lab.golden_stream(), harness) << "the same harness made them all";
  EXPECT_EQ(harness->requests(), 3) << "the seed and the two shapes";
  for (int64_t n : {1001, 1003}) {
    auto m = lab.golden({{{"n", n}}, root / "placed" / std::to_string(n), kHoldoutSeeds});
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_TRUE((*m)["golden_cache"].value("hit", false)) << n << ": made by the harness into the cache";
    EXPECT_EQ((*m)["seeds"].size(), static_cast<size_t>(kHoldoutSeeds)) << n << ": the held-out shapes' seeds, not the job's";
  }
  // The job's seeds at a case's dims: another request (the seeds are part of what the data is), made now.
  auto cased = lab.golden({{{"n", 1001}}, root / "placed" / "case"});
  ASSERT_TRUE(cased.ok()) << cased.error().message;
  EXPECT_EQ((*cased)["seeds"].size(), static_cast<size_t>(job.seeds));

  // A harness that cannot start early (it exits at once): the seed starts one, begun after the search or asked for
  // alone.
  for (bool begun : {true, false}) {
    ASSERT_TRUE(util::write_file_atomic(root / "py.fail", "").ok());
    SystemLab broken(job, runner);
    broken.start_early_work(std::nullopt);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it has ended (its end is found when it is asked)
    fs::remove(root / "py.fail");
    if (begun) broken.begin_ephemeral_seed(job.dims);
    auto again = broken.ephemeral_seed(job.dims);
    ASSERT_TRUE(again.ok()) << again.error().message;
    ASSERT_NE(broken.golden_stream(), nullptr);
    EXPECT_TRUE(broken.golden_stream()->alive());
    EXPECT_EQ(broken.golden_stream()->requests(), 1);
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace kopt::loop
