#include "roofline/ceilings.h"

#include <gtest/gtest.h>

#include <set>

#include "roofline/testing.h"

namespace kopt::roofline {

TEST(RoofTable, CoversEveryRoofOnceWithUniqueNames) {
  std::set<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(Roof::kInt8Tensor); ++i) {
    Roof r = static_cast<Roof>(i);
    EXPECT_EQ(roof_info(r).roof, r) << i;
    names.insert(roof_info(r).name);
    EXPECT_EQ(parse_roof(roof_info(r).name), r);
  }
  EXPECT_EQ(names.size(), kRoofTable.size());
  EXPECT_FALSE(parse_roof("bf16").has_value());
  EXPECT_EQ(roof_info(Roof::kInt8Tensor).unit, "TOP/s");
  EXPECT_EQ(roof_info(Roof::kDramCopy).kind, RoofKind::kBandwidth);
}

TEST(Datasheet, KnowsH200AndH100SxmOnly) {
  auto h200 = datasheet_for("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kDramCopy), 4800);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kFp32Fma), 67);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kFp64Fma), 34);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kFp64Tensor), 67);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kBf16Tensor), 990);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kFp16Tensor), 990);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kTf32Tensor), 495);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kFp8Tensor), 1979);
  EXPECT_DOUBLE_EQ(h200->values.at(Roof::kInt8Tensor), 1979);
  EXPECT_EQ(h200->values.count(Roof::kL2Read), 0u);  // not published
  auto h100 = datasheet_for("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100);
  EXPECT_DOUBLE_EQ(h100->values.at(Roof::kDramCopy), 3350);
  EXPECT_DOUBLE_EQ(h100->values.at(Roof::kBf16Tensor), 990);
  EXPECT_FALSE(datasheet_for("NVIDIA H100 PCIe"));
  EXPECT_FALSE(datasheet_for("NVIDIA H200 NVL"));
  EXPECT_FALSE(datasheet_for("NVIDIA A100-SXM4-80GB"));
}

TEST(Datasheet, FillsOnlyWhatIsMissingAndLabelsIt) {
  Ceilings c;
  c.roofs[Roof::kDramCopy] = testing::measured(4300);
  auto filled = fill_from_datasheet(c, *datasheet_for("NVIDIA H200"));
  EXPECT_EQ(c.find(Roof::kDramCopy)->value, 4300);
  EXPECT_EQ(c.find(Roof::kDramCopy)->source, CeilingSource::kMeasured);
  EXPECT_EQ(c.find(Roof::kBf16Tensor)->source, CeilingSource::kDatasheet);
  EXPECT_EQ(c.find(Roof::kBf16Tensor)->note, "H200 SXM datasheet");
  EXPECT_EQ(filled.size(), 11u);  // every datasheet roof (4 DRAM mixes, 8 compute) but the measured DRAM copy
  EXPECT_EQ(c.find(Roof::kL2Read), nullptr);
}

TEST(Ceilings, DramRoofIsTheHighestDramMeasurement) {
  Ceilings c;
  EXPECT_FALSE(c.dram_roof());
  c.roofs[Roof::kDramCopy] = testing::measured(4300);
  EXPECT_EQ(c.dram_roof(), Roof::kDramCopy);
  c.roofs[Roof::kDramRead] = testing::measured(4450);
  EXPECT_EQ(c.dram_roof(), Roof::kDramRead);
  c.roofs[Roof::kL2Read] = testing::measured(10000);  // L2 is never the DRAM roof
  EXPECT_EQ(c.dram_roof(), Roof::kDramRead);
}

TEST(Ceilings, DramRoofIgnoresDatasheetRatesWhenOneIsMeasured) {
  Ceilings c;
  Ceiling ds;
  ds.value = 4800;
  ds.source = CeilingSource::kDatasheet;
  c.roofs[Roof::kDramRead] = ds;
  EXPECT_EQ(c.dram_roof(), Roof::kDramRead);  // only a datasheet value: that one
  c.roofs[Roof::kDramCopy] = testing::measured(3900);
  EXPECT_EQ(c.dram_roof(), Roof::kDramCopy);  // a measurement beats a higher datasheet figure
}

// Read-only 4500, triad 4000, copy 3900, write-only 3600 GB/s, all measured.
Ceilings four_mixes() {
  Ceilings c;
  c.roofs[Roof::kDramRead] = testing::measured(4500);
  c.roofs[Roof::kDramTriad] = testing::measured(4000);
  c.roofs[Roof::kDramCopy] = testing::measured(3900);
  c.roofs[Roof::kDramWrite] = testing::measured(3600);
  return c;
}

TEST(DramRate, UnknownMixTakesTheHighestRate) {
  auto r = four_mixes().dram_rate(std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->roof, Roof::kDramRead);
  EXPECT_DOUBLE_EQ(r->gbps, 4500);
  EXPECT_FALSE(r->read_fraction);
  EXPECT_NE(r->rule.find("mix unknown"), std::string::npos);
}

TEST(DramRate, AMeasuredMixIsUsedAsIs) {
  Ceilings c = four_mixes();
  EXPECT_DOUBLE_EQ(c.dram_rate(2.0 / 3.0)->gbps, 4000);  // a vector add: 8 bytes read, 4 written
  EXPECT_EQ(c.dram_rate(2.0 / 3.0)->roof, Roof::kDramTriad);
  EXPECT_DOUBLE_EQ(c.dram_rate(0.5)->gbps, 3900);  // a copy, a transpose, a row softmax
  EXPECT_DOUBLE_EQ(c.dram_rate(1.0)->gbps, 4500);  // a reduction
  EXPECT_DOUBLE_EQ(c.dram_rate(0.0)->gbps, 3600);
}

TEST(DramRate, BetweenTwoMixesInterpolatesTimePerByte) {
  Ceilings c = four_mixes();
  // 0.75 lies a quarter of the way from the triad (2/3) to read-only (1).
  auto r = c.dram_rate(0.75);
  ASSERT_TRUE(r);
  const double expect = 1.0 / (0.75 / 4000 + 0.25 / 4500);
  EXPECT_NEAR(r->gbps, expect, 1e-9);
  EXPECT_GT(r->gbps, 4000);
  EXPECT_LT(r->gbps, 4500);
  EXPECT_EQ(r->roof, Roof::kDramTriad);  // the nearer mix
  EXPECT_NE(r->rule.find("between dram_triad"), std::string::npos);
  EXPECT_EQ(r->source, CeilingSource::kMeasured);
}

TEST(DramRate, BeyondTheMeasuredMixesTakesTheHighestRate) {
  Ceilings c;
  c.roofs[Roof::kDramCopy] = testing::measured(3900);
  c.roofs[Roof::kDramTriad] = testing::measured(4000);
  // Outside [0.5, 2/3] nothing is extrapolated: the mix is not monotonic (write-only beats a copy on the
  // H200), so only the highest rate known keeps the floor a lower bound.
  for (double f : {0.2, 0.9}) {
    auto r = c.dram_rate(f);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->gbps, 4000) << f;
    EXPECT_NE(r->rule.find("outside the mixes measured"), std::string::npos) << r->rule;
  }
  EXPECT_FALSE(Ceilings{}.dram_rate(0.5));  // nothing known
}

TEST(DramRate, DatasheetRatesOnlyWhenNothingIsMeasured) {
  Ceilings c;
  fill_from_datasheet(c, *datasheet_for("NVIDIA H200"));
  auto r = c.dram_rate(2.0 / 3.0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, CeilingSource::kDatasheet);
  EXPECT_DOUBLE_EQ(r->gbps, 4800);
  c.roofs[Roof::kDramCopy] = testing::measured(3900);
  c.roofs[Roof::kDramRead] = testing::measured(4500);
  r = c.dram_rate(2.0 / 3.0);  // the triad is datasheet-only: interpolated between the measured copy and read
  EXPECT_EQ(r->source, CeilingSource::kMeasured);
  EXPECT_NEAR(r->gbps, 1.0 / ((2.0 / 3.0) / 3900 + (1.0 / 3.0) / 4500), 1e-9);
}

TEST(Ceilings, JsonRoundTripsExactly) {
  Ceilings c = testing::round_ceilings();
  c.skipped[Roof::kInt8Tensor] = "cuBLASLt offers no algorithm";
  c.warnings = {"a warning"};
  c.probe = {{"clocks_seen", {{"nvml_sm_mhz_max", 1980}}}};
  c.key.probe_hash = "0123456789abcdef";
  auto back = ceilings_from_json(to_json(c));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, c);
  EXPECT_EQ(to_json(c)["dram_roof"], "dram_copy");
  EXPECT_EQ(to_json(c)["roofs"]["fp64_tensor"]["source"], "datasheet");
}

TEST(Ceilings, JsonRejectsWrongUnitsSourcesAndValues) {
  auto j = to_json(testing::round_ceilings());
  auto bad = j;
  bad["roofs"]["dram_copy"]["unit"] = "TFLOP/s";
  EXPECT_NE(ceilings_from_json(bad).error().message.find("expected GB/s"), std::string::npos);
  bad = j;
  bad["roofs"]["fp32_fma"]["source"] = "guessed";
  EXPECT_NE(ceilings_from_json(bad).error().message.find("unknown source"), std::string::npos);
  bad = j;
  bad["roofs"]["fp32_fma"]["value"] = -1;
  EXPECT_NE(ceilings_from_json(bad).error().message.find("positive"), std::string::npos);
  bad = j;
  bad["roofs"]["fp4_tensor"] = bad["roofs"]["fp32_fma"];
  EXPECT_NE(ceilings_from_json(bad).error().message.find("unknown roof"), std::string::npos);
  bad = j;
  bad.erase("key");
  EXPECT_EQ(ceilings_from_json(bad).error().code, ExitCode::kInput);
}

TEST(CeilingsKey, DescribesWhatChanged) {
  CeilingsKey a{"GPU-a", "580.159.04", 1980, 3201}, b = a;
  EXPECT_EQ(describe_key_change(a, b), "");
  b.driver_version = "580.95.05";
  b.sm_clock_max_mhz = 1755;
  EXPECT_EQ(describe_key_change(a, b), "driver 580.159.04 -> 580.95.05, max SM clock 1980 -> 1755 MHz");
}

TEST(Ceilings, TextNamesSourcesAndSkips) {
  Ceilings c = testing::round_ceilings();
  c.skipped[Roof::kInt8Tensor] = "refused";
  std::string t = format_text(c);
  EXPECT_NE(t.find("dram_copy"), std::string::npos);
  EXPECT_NE(t.find("[DRAM roof]"), std::string::npos);
  EXPECT_NE(t.find("datasheet"), std::string::npos);
  EXPECT_NE(t.find("int8_tensor  not measured: refused"), std::string::npos);
}

}  // namespace kopt::roofline
