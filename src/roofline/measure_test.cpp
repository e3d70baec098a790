#include "roofline/measure.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "roofline/probe_source.h"
#include "roofline/testing.h"
#include "util/hash.h"
#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::roofline {

namespace {

namespace fs = std::filesystem;

// Stands in for nvcc and the probe: a build "succeeds" by creating the -o file (unless told to fail, e.g.
// when cuBLASLt is on the command line); running the probe prints `probe_stdout`.
class FakeRunner : public util::CommandRunner {
 public:
  std::string probe_stdout;
  int probe_exit = 0;
  bool fail_builds_with_cublaslt = false;
  bool fail_all_builds = false;
  std::vector<util::ProcessSpec> builds, probes;

  util::ProcessResult run(const util::ProcessSpec& spec) override {
    util::ProcessResult r;
    r.started = true;
    auto o = std::find(spec.argv.begin(), spec.argv.end(), "-o");
    if (o != spec.argv.end()) {
      builds.push_back(spec);
      bool lt = std::find(spec.argv.begin(), spec.argv.end(), "-lcublasLt") != spec.argv.end();
      if (fail_all_builds || (lt && fail_builds_with_cublaslt)) {
        r.exit_code = 1;
        r.stdout_text = "fatal error: cublasLt.h: No such file or directory";
        return r;
      }
      EXPECT_TRUE(util::write_file_atomic(*(o + 1), "#!/bin/sh\n"));
      r.exit_code = 0;
      return r;
    }
    probes.push_back(spec);
    r.exit_code = probe_exit;
    r.stdout_text = probe_stdout;
    return r;
  }
};

device::GpuInfo h200() {
  device::GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-5f3c2a1b-8e7d-4c6b-9a0f-1e2d3c4b5a69";
  g.cc_major = 9;
  g.sm_clock_khz = 1980000;
  g.mem_clock_khz = 3201000;
  return g;
}

std::string sample() {
  return *util::read_file(testing_support::test_data_dir() + "/roofline/probe/sample_h200_synthetic.txt");
}

CeilingsOptions options(FakeRunner& runner, const fs::path& dir) {
  CeilingsOptions o;
  o.cache_dir = dir;
  o.nvcc = "/opt/fake/bin/nvcc";
  o.driver_version = "580.159.04";
  o.runner = &runner;
  return o;
}

}  // namespace

TEST(CeilingsCache, RoundTripsThroughTheFile) {
  testing::TempDir dir("ceil_rt");
  Ceilings c = testing::round_ceilings();
  c.skipped[Roof::kL2Read] = "why not";
  fs::path path = ceilings_cache_path(dir.path, c.key.uuid);
  EXPECT_EQ(path.filename(), c.key.uuid + ".json");
  ASSERT_TRUE(store_ceilings(path, c));
  auto back = load_cached_ceilings(path, c.key);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, c);
  auto raw = util::read_file(path);
  EXPECT_NE(raw->find("\"meta\""), std::string::npos);  // every kopt JSON starts with a meta block
}

TEST(CeilingsCache, AStaleKeyOrAMissingFileIsAnError) {
  testing::TempDir dir("ceil_stale");
  Ceilings c = testing::round_ceilings();
  fs::path path = ceilings_cache_path(dir.path, c.key.uuid);
  EXPECT_NE(load_cached_ceilings(path, c.key).error().message.find("no cached ceilings"), std::string::npos);
  ASSERT_TRUE(store_ceilings(path, c));
  CeilingsKey other = c.key;
  other.mem_clock_max_mhz = 2619;
  EXPECT_NE(load_cached_ceilings(path, other).error().message.find("max memory clock 3201 -> 2619 MHz"),
            std::string::npos);
  ASSERT_TRUE(util::write_file_atomic(path, "{not json"));
  EXPECT_FALSE(load_cached_ceilings(path, c.key));
}

TEST(GetCeilings, MeasuresOnceThenReadsTheCache) {
  testing::TempDir dir("ceil_get");
  FakeRunner runner;
  runner.probe_stdout = sample();
  auto opts = options(runner, dir.path);
  auto first = get_ceilings(h200(), false, opts);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(runner.builds.size(), 1u);
  ASSERT_EQ(runner.probes.size(), 1u);
  EXPECT_EQ(runner.probes[0].argv, (std::vector<std::string>{runner.probes[0].argv[0], "--device", "0"}));
  EXPECT_EQ(first->find(Roof::kBf16Tensor)->source, CeilingSource::kMeasured);
  // int8 was skipped by the probe: it comes from the datasheet, labelled, with a warning.
  EXPECT_EQ(first->find(Roof::kInt8Tensor)->source, CeilingSource::kDatasheet);
  EXPECT_EQ(first->find(Roof::kInt8Tensor)->value, 1979);
  EXPECT_EQ(first->skipped.count(Roof::kInt8Tensor), 1u);
  EXPECT_NE(std::find(first->warnings.begin(), first->warnings.end(),
                      "int8_tensor is the H200 SXM datasheet value (not measured)"),
            first->warnings.end());
  EXPECT_EQ(first->key, (CeilingsKey{h200().uuid, "580.159.04", 1980, 3201,
                                     util::content_hash(ceilings_probe_source()).substr(0, 16)}));
  EXPECT_TRUE(fs::exists(ceilings_cache_path(dir.path, h200().uuid)));

  auto second = get_ceilings(h200(), false, opts);
  ASSERT_TRUE(second);
  EXPECT_EQ(runner.probes.size(), 1u);  // from the cache
  EXPECT_EQ(*second, *first);

  auto again = get_ceilings(h200(), true, opts);  // --remeasure
  ASSERT_TRUE(again);
  EXPECT_EQ(runner.probes.size(), 2u);
  EXPECT_EQ(runner.builds.size(), 1u);  // the built probe is reused
}

TEST(GetCeilings, AChangedDriverOrClockMeasuresAgain) {
  testing::TempDir dir("ceil_key");
  FakeRunner runner;
  runner.probe_stdout = sample();
  auto opts = options(runner, dir.path);
  ASSERT_TRUE(get_ceilings(h200(), false, opts));
  opts.driver_version = "590.10.01";
  auto c = get_ceilings(h200(), false, opts);
  ASSERT_TRUE(c);
  EXPECT_EQ(runner.probes.size(), 2u);
  EXPECT_EQ(c->key.driver_version, "590.10.01");
  bool said = false;
  for (const auto& w : c->warnings) said |= w.find("driver 580.159.04 -> 590.10.01") != std::string::npos;
  EXPECT_TRUE(said);
  auto gpu = h200();
  gpu.sm_clock_khz = 1755000;
  ASSERT_TRUE(get_ceilings(gpu, false, opts));
  EXPECT_EQ(runner.probes.size(), 3u);
}

TEST(GetCeilings, APrebuiltProbeIsRunWithoutBuildingAndTheCacheKnowsIt) {
  testing::TempDir dir("ceil_prebuilt");
  FakeRunner runner;
  runner.probe_stdout = sample();
  auto opts = options(runner, dir.path / "cache");
  EXPECT_FALSE(ready_probe(h200(), opts));  // nothing built, nothing prebuilt: a run measures them after the gates
  EXPECT_FALSE(ceilings_cached(h200(), opts));
  opts.prebuilt_dir = dir.path / "bin";
  EXPECT_FALSE(prebuilt_probe(opts.prebuilt_dir, "sm_90"));
  ASSERT_TRUE(util::write_file_atomic(opts.prebuilt_dir / "kopt_ceilings_probe_sm_100", "#!/bin/sh\n"));
  EXPECT_FALSE(ready_probe(h200(), opts));  // another arch's is not this GPU's
  ASSERT_TRUE(util::write_file_atomic(opts.prebuilt_dir / "kopt_ceilings_probe_sm_90", "#!/bin/sh\n"));
  ASSERT_TRUE(ready_probe(h200(), opts));
  EXPECT_EQ(*ready_probe(h200(), opts), opts.prebuilt_dir / "kopt_ceilings_probe_sm_90");
  EXPECT_FALSE(prebuilt_probe(fs::path(), "sm_90"));  // no folder: none

  auto c = get_ceilings(h200(), false, opts);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(runner.builds.empty());
  ASSERT_EQ(runner.probes.size(), 1u);
  EXPECT_EQ(runner.probes[0].argv.front(), (opts.prebuilt_dir / "kopt_ceilings_probe_sm_90").string());
  EXPECT_EQ(c->find(Roof::kBf16Tensor)->source, CeilingSource::kMeasured);
  EXPECT_TRUE(ceilings_cached(h200(), opts));
  opts.driver_version = "590.10.01";
  EXPECT_FALSE(ceilings_cached(h200(), opts));  // the key is get_ceilings' own
}

TEST(GetCeilings, APrebuiltProbeThatCannotStartHereIsBuiltHereAndSaysSo) {
  testing::TempDir dir("ceil_prebuilt_127");
  FakeRunner runner;
  runner.probe_stdout = sample();
  runner.probe_exit = 127;  // the loader's: "error while loading shared libraries: libcublasLt.so.13"
  auto opts = options(runner, dir.path / "cache");
  opts.prebuilt_dir = dir.path / "bin";
  ASSERT_TRUE(util::write_file_atomic(opts.prebuilt_dir / "kopt_ceilings_probe_sm_90", "#!/bin/sh\n"));
  auto c = get_ceilings(h200(), false, opts);
  // The prebuilt first, then the one built here (the fake prints its sample either way).
  ASSERT_EQ(runner.probes.size(), 2u);
  EXPECT_EQ(runner.builds.size(), 1u);
  EXPECT_NE(runner.probes[1].argv.front(), runner.probes[0].argv.front());
  ASSERT_TRUE(c) << c.error().message;
  bool said = false;
  for (const auto& w : c->warnings)
    said |= w.find("the prebuilt probe") != std::string::npos && w.find("built with this machine's nvcc") != std::string::npos;
  EXPECT_TRUE(said);
  // Built now: ready without nvcc next time.
  opts.prebuilt_dir.clear();
  EXPECT_TRUE(ready_probe(h200(), opts));
}

TEST(GetCeilings, QuickRunsAreNeverCached) {
  testing::TempDir dir("ceil_quick");
  FakeRunner runner;
  runner.probe_stdout = sample();
  auto opts = options(runner, dir.path);
  opts.quick = true;
  ASSERT_TRUE(get_ceilings(h200(), false, opts));
  EXPECT_EQ(runner.probes[0].argv.back(), "--quick");
  EXPECT_FALSE(fs::exists(ceilings_cache_path(dir.path, h200().uuid)));
}

TEST(GetCeilings, FallsBackOnTheDatasheetLabelledWhenTheProbeFails) {
  testing::TempDir dir("ceil_fallback");
  FakeRunner runner;
  runner.probe_stdout = *util::read_file(testing_support::test_data_dir() + "/roofline/probe/probe_output_no_gpu.json");
  runner.probe_exit = 2;
  auto opts = options(runner, dir.path);
  auto c = get_ceilings(h200(), false, opts);
  ASSERT_TRUE(c) << c.error().message;
  for (const auto& [r, x] : c->roofs) EXPECT_EQ(x.source, CeilingSource::kDatasheet) << roof_info(r).name;
  EXPECT_DOUBLE_EQ(c->find(Roof::kDramCopy)->value, 4800);
  ASSERT_FALSE(c->warnings.empty());
  EXPECT_NE(c->warnings.back().find("NOT measured"), std::string::npos);
  EXPECT_NE(c->warnings.back().find("cudaErrorInsufficientDriver"), std::string::npos);
  EXPECT_FALSE(fs::exists(ceilings_cache_path(dir.path, h200().uuid)));  // a fallback is never cached

  opts.allow_datasheet = false;
  auto strict = get_ceilings(h200(), false, opts);
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().code, ExitCode::kGate);

  auto unknown = h200();
  unknown.name = "NVIDIA A100-SXM4-80GB";
  opts.allow_datasheet = true;
  EXPECT_FALSE(get_ceilings(unknown, false, opts));
}

TEST(GetCeilings, BuildsWithoutCublasLtWhenThatFailsAndSaysSo) {
  testing::TempDir dir("ceil_nolt");
  FakeRunner runner;
  runner.probe_stdout = sample();
  runner.fail_builds_with_cublaslt = true;
  auto opts = options(runner, dir.path);
  // The fake nvcc's folder has no cuBLASLt, but $CUDA_HOME or /usr/local/cuda may: both paths are covered.
  std::vector<std::string> warnings;
  auto exe = build_probe(runner, opts.nvcc, "sm_90", dir.path / "probe", 60, warnings);
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_TRUE(fs::exists(*exe));
  const auto& last = runner.builds.back().argv;
  EXPECT_NE(std::find(last.begin(), last.end(), "-DKOPT_PROBE_NO_CUBLASLT"), last.end());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("tensor-core ceilings are not measured"), std::string::npos);
}

TEST(GetCeilings, ABuildFailureNamesNvccAndItsOutput) {
  testing::TempDir dir("ceil_buildfail");
  FakeRunner runner;
  runner.fail_all_builds = true;
  std::vector<std::string> warnings;
  auto exe = build_probe(runner, "/opt/fake/bin/nvcc", "sm_90", dir.path, 60, warnings);
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.error().code, ExitCode::kGate);
  EXPECT_NE(exe.error().message.find("/opt/fake/bin/nvcc"), std::string::npos);
  EXPECT_NE(exe.error().message.find("cublasLt.h"), std::string::npos);
}

TEST(ProbeBuildCommand, LinksCublasLtWithAnRpathOrDefinesItsAbsence) {
  auto with = probe_build_command("nvcc", "sm_90", "p.cu", "p", CublasLtDirs{"/cuda/include", "/cuda/lib64"});
  EXPECT_EQ(with, (std::vector<std::string>{"nvcc", "-arch=sm_90", "-O3", "-std=c++17", "-o", "p", "p.cu",
                                            "-I/cuda/include", "-L/cuda/lib64", "-Xlinker", "-rpath", "-Xlinker",
                                            "/cuda/lib64", "-lcublasLt", "-lcublas", "-ldl"}));
  auto without = probe_build_command("nvcc", "sm_90", "p.cu", "p", std::nullopt);
  EXPECT_EQ(without, (std::vector<std::string>{"nvcc", "-arch=sm_90", "-O3", "-std=c++17", "-o", "p", "p.cu",
                                               "-DKOPT_PROBE_NO_CUBLASLT", "-ldl"}));
}

TEST(NvrmVersion, ReadsBothKernelModuleFlavours) {
  // The first line of /proc/driver/nvidia/version, proprietary and open kernel modules.
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 "
                               "15:05:41 UTC 2025\nGCC version:  gcc version 13.3.0\n"),
            "580.159.04");
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release "
                               "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n"),
            "570.86.15");
  EXPECT_FALSE(parse_nvrm_version("GCC version: gcc 12.2.0\n"));
  EXPECT_FALSE(parse_nvrm_version(""));
}

TEST(CeilingsCacheDir, FollowsKoptCacheDir) {
  ::setenv("KOPT_CACHE_DIR", "/tmp/kopt-cache-test", 1);
  EXPECT_EQ(default_ceilings_cache_dir(), fs::path("/tmp/kopt-cache-test/ceilings"));
  ::unsetenv("KOPT_CACHE_DIR");
  EXPECT_EQ(default_ceilings_cache_dir().filename(), "ceilings");
}

}  // namespace kopt::roofline
