#include "search/measured_table.h"

#include <gtest/gtest.h>

#include "search/testing.h"

namespace kopt::search {
namespace {

const Registry& reg() { return testing::test_registry(); }

const char* const kKernel = testing::kSmallSpaceKernel;

SearchSpace space() {
  auto a = parse_annotations(kKernel, "k.cu");
  EXPECT_TRUE(a.ok()) << a.error().message;
  if (!a) return {};
  SpaceOptions o;
  o.offer_flag_methods = false;
  auto s = build_space(*a, reg(), o);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return *s;
}

TEST(MeasuredTable, ReadsDimensionsStatusAndTimes) {
  auto t = parse_measured_table(
      "index,A,B,KOPT_VECTORIZED_ACCESS,status,median_ms,ci95_low_ms,ci95_high_ms,tflops\n"
      "0,1,1,0,ok,2.5,2.4,2.6,1.0\n"
      "1,1,2,0,wrong_result,,,,\n"
      "\n"
      "2,2,1,1,crashed,3.0,,,\n",
      "m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->dims, (std::vector<std::string>{"A", "B", "KOPT_VECTORIZED_ACCESS"}));
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0].values, (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(t->rows[0].status, "ok");
  EXPECT_DOUBLE_EQ(*t->rows[0].median_ms, 2.5);
  EXPECT_FALSE(t->rows[1].median_ms.has_value());
  EXPECT_FALSE(t->rows[2].median_ms.has_value());  // a time without status ok is not a time
  EXPECT_EQ(t->rows[2].line, 5);
}

TEST(MeasuredTable, ErrorsNameTheLine) {
  auto err = [](const char* csv) {
    auto t = parse_measured_table(csv, "m.csv");
    EXPECT_FALSE(t.ok());
    return t ? std::string() : t.error().message;
  };
  EXPECT_EQ(err(""), "m.csv: empty (expected a header line)");
  EXPECT_EQ(err("index,A,median_ms\n0,1,2\n"), "m.csv: the header needs the columns status and median_ms");
  EXPECT_EQ(err("A,status,median_ms\nx,ok,1\n"), "m.csv:2: A = 'x' is not an integer");
  EXPECT_EQ(err("A,status,median_ms\n1,ok,\n"), "m.csv:2: status ok but median_ms '' is not a positive number");
  EXPECT_EQ(err("A,status,median_ms\n1,ok\n"), "m.csv:2: 2 cells, the header has 3");
  EXPECT_EQ(err("A,status,median_ms\n"), "m.csv: no rows after the header");
}

TEST(MeasuredTable, AFailedRowsUnwrittenShareIsKeptForTheFeasibilityModel) {
  SearchSpace s = space();
  auto t = parse_measured_table("A,B,KOPT_VECTORIZED_ACCESS,status,median_ms,unwritten_fraction\n"
                                "1,1,0,ok,2,\n1,2,0,unwritten_output,,0.75\n1,3,0,wrong_result,,\n",
                                "m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->dims, (std::vector<std::string>{"A", "B", "KOPT_VECTORIZED_ACCESS"}));
  EXPECT_FALSE(t->rows[0].unwritten_fraction);
  ASSERT_TRUE(t->rows[1].unwritten_fraction);
  EXPECT_DOUBLE_EQ(*t->rows[1].unwritten_fraction, 0.75);
  EXPECT_FALSE(t->rows[2].unwritten_fraction);  // wrong, every element written: no share
  auto m = map_onto_space(*t, s, "m.csv");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->unwritten.size(), 1u);
  EXPECT_DOUBLE_EQ(m->unwritten.begin()->second, 0.75);
  EXPECT_FALSE(m->ms.at(m->unwritten.begin()->first));
  // A share on a correct row, or outside (0, 1], is an error naming the line.
  for (const char* bad : {"A,B,KOPT_VECTORIZED_ACCESS,status,median_ms,unwritten_fraction\n1,1,0,ok,2,0.5\n",
                          "A,B,KOPT_VECTORIZED_ACCESS,status,median_ms,unwritten_fraction\n1,1,0,unwritten_output,,1.5\n"}) {
    auto e = parse_measured_table(bad, "m.csv");
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().message.rfind("m.csv:2: unwritten_fraction", 0), 0u) << e.error().message;
  }
}

TEST(MeasuredTable, MapsOntoTheSpaceAndCountsWhatIsMissing) {
  SearchSpace s = space();
  auto t = parse_measured_table("B,A,KOPT_VECTORIZED_ACCESS,status,median_ms\n5,4,1,ok,1.5\n1,1,0,ok,2\n2,1,0,timed_out,\n", "m.csv");
  ASSERT_TRUE(t.ok());
  auto m = map_onto_space(*t, s, "m.csv");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->ms.size(), 3u);
  EXPECT_EQ(m->missing, 31u);
  EXPECT_EQ(m->failed(), 1u);
  EXPECT_DOUBLE_EQ(*m->best_ms(), 1.5);
  Config c = s.default_config();  // A=1 B=1, guard off
  EXPECT_DOUBLE_EQ(*m->ms.at(c), 2.0);
  c[s.dim_index("A")] = 2;  // A=4
  c[s.dim_index("B")] = 4;  // B=5
  c[s.dim_index("KOPT_VECTORIZED_ACCESS")] = 1;
  EXPECT_DOUBLE_EQ(*m->ms.at(c), 1.5);
}

TEST(MeasuredTable, SpreadOverFlagsCopiesEachRowToEveryFlagCombinationWithItsTime) {
  auto a = parse_annotations(kKernel, "k.cu");
  ASSERT_TRUE(a.ok());
  SpaceOptions o;
  o.offer_flag_methods = true;
  auto s = build_space(*a, reg(), o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  size_t combos = 1, flags = 0;
  for (const auto& d : s->dims)
    if (d.kind == DimKind::kFlag) combos *= d.values.size(), ++flags;
  ASSERT_GT(flags, 0u) << "the registry offers compiler-flag methods";
  auto t = parse_measured_table(
      "A,B,KOPT_VECTORIZED_ACCESS,status,median_ms,unwritten_fraction\n"
      "1,1,0,ok,2,\n1,2,0,unwritten_output,,0.75\n",
      "m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto m = map_onto_space(*t, *s, "m.csv");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->ms.size(), 2u);  // the flags at their defaults only
  spread_over_flags(*m, *s);
  EXPECT_EQ(m->ms.size(), 2 * combos);
  EXPECT_EQ(m->unwritten.size(), combos);
  EXPECT_DOUBLE_EQ(*m->best_ms(), 2.0);
  for (const auto& [c, ms] : m->ms) {
    Config base = c;
    for (size_t d = 0; d < s->dims.size(); ++d)
      if (s->dims[d].kind == DimKind::kFlag) base[d] = s->dims[d].default_index;
    EXPECT_EQ(ms, m->ms.at(base)) << s->key(c);  // a flag changes no time
  }
}

TEST(MeasuredTable, RefusesATableOfAnotherSpace) {
  SearchSpace s = space();
  auto err = [&](const char* csv) {
    auto t = parse_measured_table(csv, "m.csv");
    EXPECT_TRUE(t.ok()) << t.error().message;
    auto m = map_onto_space(*t, s, "m.csv");
    EXPECT_FALSE(m.ok());
    return m ? std::string() : m.error().message;
  };
  EXPECT_EQ(err("A,B,KOPT_VECTORIZED_ACCESS,C,status,median_ms\n1,1,0,1,ok,1\n"), "m.csv: column 'C' is not a declared dimension of k.cu");
  EXPECT_EQ(err("A,B,status,median_ms\n1,1,ok,1\n"), "m.csv: no column for the dimension 'KOPT_VECTORIZED_ACCESS' of k.cu");
  EXPECT_EQ(err("A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n3,1,0,ok,1\n"), "m.csv:2: A = 3 is not one of the values the kernel declares");
  EXPECT_EQ(err("A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n8,3,0,ok,1\n"), "m.csv:2: A=8,B=3,KOPT_VECTORIZED_ACCESS=0 breaks a constraint of the space");
  EXPECT_EQ(err("A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n1,1,0,ok,1\n1,1,0,ok,2\n"), "m.csv:3: A=1,B=1,KOPT_VECTORIZED_ACCESS=0 appears twice");
}

}  // namespace
}  // namespace kopt::search
