#include "profile/classify.h"

#include <gtest/gtest.h>

#include "profile/profiler.h"
#include "profile/test_data.h"

namespace kopt::profile {

TEST(Classify, RealSaxpyIsMemoryBound) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  const KernelRecord& k = page->kernels[0];
  Pass1Evidence e = evidence_of([&](const std::string& m) { return k.number(m); });
  EXPECT_DOUBLE_EQ(*e.compute_sol_pct, 34.79);
  EXPECT_DOUBLE_EQ(*e.memory_sol_pct, 70.81);
  EXPECT_DOUBLE_EQ(*e.achieved_occupancy_pct, 74.18);
  EXPECT_DOUBLE_EQ(*e.issue_active_pct, 16.52);
  Classification c = classify(e);
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.binding, std::vector<Axis>{Axis::kMemory});
  EXPECT_NE(c.reason.find("memory 70.8 %"), std::string::npos) << c.reason;
}

TEST(Classify, Cases) {
  EXPECT_EQ(classify({85.0, 20.0, 50.0, 80.0}).binding, std::vector<Axis>{Axis::kCompute});
  EXPECT_EQ(classify({70.0, 90.0, {}, {}}).binding, (std::vector<Axis>{Axis::kMemory, Axis::kCompute}));
  EXPECT_EQ(classify({95.0, 60.0, {}, {}}).binding, (std::vector<Axis>{Axis::kCompute, Axis::kMemory}));
  // Neither unit busy: latency, then the unit that leads by >= 10 points.
  EXPECT_EQ(classify({12.0, 35.0, 20.0, 8.0}).binding, (std::vector<Axis>{Axis::kLatency, Axis::kMemory}));
  EXPECT_EQ(classify({40.0, 30.0, {}, {}}).binding, (std::vector<Axis>{Axis::kLatency, Axis::kCompute}));
  EXPECT_EQ(classify({30.0, 35.0, {}, {}}).binding, std::vector<Axis>{Axis::kLatency});
  EXPECT_EQ(classify({59.99, 59.0, {}, {}}).binding, std::vector<Axis>{Axis::kLatency});
  EXPECT_EQ(classify({60.0, 0.0, {}, {}}).binding, std::vector<Axis>{Axis::kCompute});
}

TEST(Classify, UnknownSolProfilesEveryAxis) {
  Classification c = classify({{}, 70.0, {}, {}});
  EXPECT_FALSE(c.known);
  EXPECT_EQ(c.binding.size(), 3u);
  EXPECT_NE(c.reason.find("unknown"), std::string::npos);
}

}  // namespace kopt::profile
