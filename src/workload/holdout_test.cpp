#include "workload/holdout.h"

#include <gtest/gtest.h>

namespace kopt::workload {

TEST(Holdout, Primes) {
  EXPECT_TRUE(is_prime(2));
  EXPECT_TRUE(is_prime(2039));
  EXPECT_FALSE(is_prime(2041));  // 13 x 157
  EXPECT_FALSE(is_prime(1));
  EXPECT_EQ(largest_prime_at_most(2048), 2039);
  EXPECT_EQ(largest_prime_at_most(1), 0);
}

TEST(Holdout, AwkwardShapesOfASquareMatmul) {
  auto h = awkward_shapes({{"M", 4096}, {"N", 4096}, {"K", 4096}});
  ASSERT_EQ(h.cases.size(), 6u);
  auto by = [&](const std::string& n) {
    for (const auto& c : h.cases)
      if (c.name == n) return c.requested;
    ADD_FAILURE() << "no case " << n;
    return Dims{};
  };
  EXPECT_EQ(by("tile_plus_one"), (Dims{{"M", 2049}, {"N", 2049}, {"K", 2049}}));
  EXPECT_EQ(by("tile_minus_one"), (Dims{{"M", 2047}, {"N", 2047}, {"K", 2047}}));
  EXPECT_EQ(by("primes"), (Dims{{"K", 2039}, {"M", 2029}, {"N", 2027}}));  // distinct: swapped extents show
  EXPECT_EQ(by("unit_K"), (Dims{{"M", 2048}, {"N", 2048}, {"K", 1}}));
  EXPECT_EQ(by("unit_N"), (Dims{{"M", 2048}, {"N", 1}, {"K", 2048}}));
  for (const auto& c : h.cases) {
    EXPECT_EQ(c.origin, CaseOrigin::kHoldoutDerived);
    EXPECT_FALSE(c.note.empty());
    if (c.name.rfind("unit_", 0) == 0) continue;  // the other axes stay aligned there
    for (const auto& [k, v] : c.requested) {
      EXPECT_TRUE(v == 1 || v % 32 != 0) << c.name << " " << k << "=" << v;  // never a multiple of 32
    }
  }
}

TEST(Holdout, SmallAndSingleAxisDimsAndUnscaledOnes) {
  auto h = awkward_shapes({{"n", 1000}, {"radius", 3}});
  ASSERT_EQ(h.cases.size(), 4u);
  EXPECT_EQ(h.cases[0].requested, (Dims{{"n", 385}, {"radius", 3}}));  // radius < 64: kept
  EXPECT_EQ(h.cases[1].requested.at("n"), 383);
  EXPECT_EQ(h.cases[2].requested.at("n"), 499);
  EXPECT_EQ(h.cases[3].requested.at("n"), 1);
  auto small = awkward_shapes({{"n", 100}});
  ASSERT_GE(small.cases.size(), 3u);
  EXPECT_EQ(small.cases[0].requested.at("n"), 33);
  EXPECT_EQ(small.cases[1].requested.at("n"), 31);
  EXPECT_EQ(small.cases[2].requested.at("n"), 47);
}

TEST(Holdout, NoScalableAxisGivesANoteAndSearchCasesAreNotRepeated) {
  auto none = awkward_shapes({{"a", 7}, {"b", 9}});
  EXPECT_TRUE(none.cases.empty());
  EXPECT_NE(none.note.find("--holdout-shapes"), std::string::npos);
  Case search;
  search.requested = search.realised = Dims{{"n", 385}};
  auto h = awkward_shapes({{"n", 1000}}, {search});
  for (const auto& c : h.cases) EXPECT_NE(c.requested, search.requested) << c.name;
  EXPECT_EQ(h.cases.size(), 3u);
}

}  // namespace kopt::workload
