#include "roofline/probe_output.h"

#include <gtest/gtest.h>

#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::roofline {

namespace {

std::string data(const std::string& name) {
  auto t = util::read_file(testing_support::test_data_dir() + "/roofline/probe/" + name);
  EXPECT_TRUE(t) << name;
  return t ? *t : "";
}

const CeilingsKey kKey{"GPU-5f3c2a1b-8e7d-4c6b-9a0f-1e2d3c4b5a69", "580.159.04", 1980, 3201};

}  // namespace

TEST(ProbeOutput, ParsesTheSampleAfterAStrayLine) {
  auto p = parse_probe_output(data("sample_h200_synthetic.txt"));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->gpu_name, "NVIDIA H200");
  EXPECT_EQ(p->uuid, kKey.uuid);
  EXPECT_EQ(p->driver_version, "580.159.04");
  EXPECT_EQ(p->cuda_driver_version, 13000);
  EXPECT_EQ(p->sm_clock_max_mhz, 1980);
  EXPECT_EQ(p->mem_clock_max_mhz, 3201);
  ASSERT_EQ(p->measurements.size(), 11u);
  EXPECT_EQ(p->measurements[0].name, "dram_copy");
  EXPECT_DOUBLE_EQ(p->measurements[0].value, 4312.5);
  EXPECT_DOUBLE_EQ(p->measurements[0].median_ms, 0.99595);
  EXPECT_EQ(p->measurements[0].reps, 15);
  EXPECT_TRUE(p->measurements[9].skipped);
  EXPECT_EQ(p->measurements[9].reason, "cuBLASLt offers no algorithm for this type on this GPU");
  EXPECT_DOUBLE_EQ(p->clocks_seen["fp32_fma_sm_mhz_from_clock64"].get<double>(), 1976.4);
}

TEST(ProbeOutput, BecomesMeasuredCeilingsWithSkipsListed) {
  auto p = parse_probe_output(data("sample_h200_synthetic.txt"));
  ASSERT_TRUE(p);
  auto c = ceilings_from_probe(*p, kKey, "2026-11-30T03:00:00Z");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->roofs.size(), 10u);
  for (const auto& [r, x] : c->roofs) EXPECT_EQ(x.source, CeilingSource::kMeasured) << roof_info(r).name;
  EXPECT_DOUBLE_EQ(c->find(Roof::kBf16Tensor)->value, 781.6);
  EXPECT_DOUBLE_EQ(*c->find(Roof::kBf16Tensor)->max_ms, 1.42544);
  EXPECT_EQ(c->dram_roof(), Roof::kDramRead);  // 4471.9 > 4312.5
  EXPECT_EQ(c->find(Roof::kInt8Tensor), nullptr);
  EXPECT_EQ(c->skipped.at(Roof::kInt8Tensor), "cuBLASLt offers no algorithm for this type on this GPU");
  EXPECT_EQ(c->key, kKey);
  EXPECT_EQ(c->probe["device"]["sm_count"], 132);
  EXPECT_TRUE(c->warnings.empty());
}

TEST(ProbeOutput, TheRealNoGpuOutputIsAGateError) {
  auto p = parse_probe_output(data("probe_output_no_gpu.json"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ExitCode::kGate);
  EXPECT_NE(p.error().message.find("cudaErrorInsufficientDriver"), std::string::npos);
}

TEST(ProbeOutput, RejectsWhatIsNotTheProbesJson) {
  EXPECT_NE(parse_probe_output("").error().message.find("no JSON"), std::string::npos);
  EXPECT_NE(parse_probe_output("Segmentation fault\n").error().message.find("no JSON"), std::string::npos);
  EXPECT_NE(parse_probe_output("{\"kopt_ceilings_probe\": 1, \"device\": ").error().message.find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(parse_probe_output("{\"a\": 1}").error().message.find("kopt_ceilings_probe"), std::string::npos);
  EXPECT_NE(parse_probe_output("{\"kopt_ceilings_probe\": 1, \"measurements\": []}").error().message.find("malformed"),
            std::string::npos);
}

TEST(ProbeOutput, RejectsUnknownNamesWrongUnitsAndBadValues) {
  auto p = parse_probe_output(data("sample_h200_synthetic.txt"));
  ASSERT_TRUE(p);
  auto bad = *p;
  bad.measurements[0].unit = "TFLOP/s";
  EXPECT_NE(ceilings_from_probe(bad, kKey, "t").error().message.find("expected GB/s"), std::string::npos);
  bad = *p;
  bad.measurements[0].name = "hbm_copy";
  EXPECT_NE(ceilings_from_probe(bad, kKey, "t").error().message.find("unknown measurement 'hbm_copy'"),
            std::string::npos);
  bad = *p;
  bad.measurements[3].value = 0;
  EXPECT_NE(ceilings_from_probe(bad, kKey, "t").error().message.find("not a positive number"), std::string::npos);
  CeilingsKey other = kKey;
  other.uuid = "GPU-other";
  EXPECT_NE(ceilings_from_probe(*p, other, "t").error().message.find("asked for GPU-other"), std::string::npos);
}

TEST(ProbeOutput, QuickModeIsSaidInEveryNote) {
  auto p = parse_probe_output(data("sample_h200_synthetic.txt"));
  ASSERT_TRUE(p);
  p->config["quick"] = true;
  auto c = ceilings_from_probe(*p, kKey, "t");
  ASSERT_TRUE(c);
  for (const auto& [r, x] : c->roofs) EXPECT_NE(x.note.find("quick mode"), std::string::npos);
}

TEST(ProbeOutput, NoDramMeasurementIsAWarning) {
  auto p = parse_probe_output(data("sample_h200_synthetic.txt"));
  ASSERT_TRUE(p);
  p->measurements.erase(p->measurements.begin(), p->measurements.begin() + 2);
  auto c = ceilings_from_probe(*p, kKey, "t");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_NE(c->warnings[0].find("no DRAM"), std::string::npos);
}

}  // namespace kopt::roofline
