// The ceilings probe itself: its embedded source matches the .cu file, it compiles and links with the real
// nvcc (skipped where nvcc is missing), and on a GPU it measures plausible ceilings.
#include <gtest/gtest.h>

#include <algorithm>

#include "device/gpu_info.h"
#include "roofline/measure.h"
#include "roofline/probe_output.h"
#include "roofline/probe_source.h"
#include "roofline/testing.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::roofline {

TEST(CeilingsProbeSource, MatchesTheCuFile) {
  auto cu = util::read_file(testing_support::source_dir() + "/src/roofline/ceilings_probe.cu");
  ASSERT_TRUE(cu) << cu.error().message;
  EXPECT_TRUE(*cu == ceilings_probe_source())
      << "the embedded probe source (build/generated/ceilings_probe_source.cpp) differs from the .cu: rebuild";
  EXPECT_NE(ceilings_probe_source().find("int main("), std::string::npos);
}

TEST(CeilingsProbeBuild, CompilesAndLinksWithNvcc) {
  std::string nvcc = toolchain::find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  auto lt = find_cublaslt(nvcc);
  testing::TempDir dir("probe_build");
  util::SystemRunner runner;
  std::vector<std::string> warnings;
  auto exe = build_probe(runner, nvcc, "sm_90", dir.path, 600, warnings);
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_TRUE(std::filesystem::is_regular_file(*exe));
  if (lt) {
    EXPECT_TRUE(warnings.empty()) << warnings.front();  // linked against cuBLASLt
  }
  // Runs anywhere: without a GPU it prints its error as JSON, which the parser turns into a gate error.
  util::ProcessSpec spec;
  spec.argv = {exe->string(), "--quick", "--only", "dram_copy"};
  spec.timeout_s = 120;
  auto r = runner.run(spec);
  ASSERT_TRUE(r.started) << r.start_error;  // the dynamic libraries (cuBLASLt via rpath) resolve
  auto parsed = parse_probe_output(r.stdout_text);
  if (r.exit_code == 2) {
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().code, ExitCode::kGate);
  } else {
    ASSERT_TRUE(parsed) << parsed.error().message << "\n" << r.stderr_text;
    ASSERT_EQ(parsed->measurements.size(), 1u);
  }
  // A second build reuses the executable.
  auto again = build_probe(runner, nvcc, "sm_90", dir.path, 600, warnings);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *exe);
}

// On a GPU: a quick measurement gives plausible, measured ceilings (the lead runs this on the H200).
TEST(CeilingsGpu, QuickProbeMeasuresPlausibleCeilings) {
  auto info = device::query_gpus(0);
  if (!info) GTEST_SKIP() << info.error().message;
  if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "nvcc not found";
  testing::TempDir dir("probe_gpu");
  CeilingsOptions opts;
  opts.cache_dir = dir.path;
  opts.quick = true;
  opts.allow_datasheet = false;
  opts.cuda_driver_fallback = info->driver_version_text();
  const auto& gpu = info->gpus.front();
  auto c = get_ceilings(gpu, true, opts);
  ASSERT_TRUE(c) << c.error().message;
  std::fputs(format_text(*c).c_str(), stdout);
  EXPECT_EQ(c->key.uuid, gpu.uuid);
  auto dram = c->dram_roof();
  ASSERT_TRUE(dram);
  EXPECT_EQ(c->find(*dram)->source, CeilingSource::kMeasured);
  EXPECT_GT(c->find(*dram)->value, 100);     // GB/s
  EXPECT_LT(c->find(*dram)->value, 20000);
  ASSERT_NE(c->find(Roof::kFp32Fma), nullptr);
  EXPECT_EQ(c->find(Roof::kFp32Fma)->source, CeilingSource::kMeasured);
  EXPECT_GT(c->find(Roof::kFp32Fma)->value, 1);  // TFLOP/s
  if (auto ds = datasheet_for(gpu.name)) {
    // Nothing measured may beat the datasheet by more than 10%.
    for (const auto& [r, x] : c->roofs) {
      if (x.source == CeilingSource::kMeasured && ds->values.count(r)) {
        EXPECT_LT(x.value, 1.1 * ds->values.at(r)) << roof_info(r).name;
      }
    }
  }
}

}  // namespace kopt::roofline
