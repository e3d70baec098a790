// The real lab's pieces that run without a GPU: golden data at another case's dims through the Python harness
// (the workload matrix, the sanitizer's small case and the held-out shapes each get theirs).
#include <gtest/gtest.h>

#include <filesystem>

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
  auto m = lab.golden({{"n", 1001}}, dir / "case");
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
  EXPECT_FALSE(bad_lab.golden({{"n", 64}}, dir / "bad").ok());
}

}  // namespace
}  // namespace kopt::loop
