#include "profile/csv.h"

#include <gtest/gtest.h>

#include "profile/test_data.h"

namespace kopt::profile {

TEST(NcuCsv, NumbersWithThousandsSeparatorsAndWords) {
  EXPECT_EQ(parse_ncu_number("456,703"), 456703.0);  // "Elapsed Cycles" on the real details page
  EXPECT_EQ(parse_ncu_number("1,980,000"), 1980000.0);
  EXPECT_DOUBLE_EQ(*parse_ncu_number("3,199,256,282.34"), 3199256282.34);
  EXPECT_DOUBLE_EQ(*parse_ncu_number("70.81"), 70.81);
  EXPECT_EQ(parse_ncu_number("0"), 0.0);
  EXPECT_EQ(parse_ncu_number("-3"), -3.0);
  EXPECT_EQ(parse_ncu_number("1.5e+06"), 1.5e6);
  EXPECT_EQ(parse_ncu_number(" 12 "), 12.0);
  for (const char* unknown : {"n/a", "no data", "", "(256, 1, 1)", "8,524 (100; 100; 75)", "PolicySpread", "12,34",
                              "1,2345", ",123", "nan", "inf", "No-CC"})
    EXPECT_FALSE(parse_ncu_number(unknown)) << unknown;
}

TEST(NcuCsv, QuotedFieldsCommasQuotesAndLineBreaks) {
  auto rows = parse_ncu_csv(
      "==PROF== Connected to process 1 (/tmp/k)\n"
      "program output, with a comma\n"
      "\"ID\",\"Kernel Name\",\"Rule Description\"\n"
      "\"0\",\"f(int, float *)\",\"say \"\"hi\"\"\nsecond line\"\n"
      "==PROF== Disconnected from process 1\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (CsvRow{"ID", "Kernel Name", "Rule Description"}));
  EXPECT_EQ(rows[1], (CsvRow{"0", "f(int, float *)", "say \"hi\"\nsecond line"}));
  EXPECT_TRUE(parse_ncu_csv("==ERROR== no table\n").empty());
}

TEST(NcuCsv, RealRawPageHasHeaderUnitsAndOneKernel) {
  auto rows = parse_ncu_csv(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_EQ(rows.size(), 3u);  // header, units, saxpy
  EXPECT_EQ(rows[0].size(), 655u);
  EXPECT_EQ(rows[1].size(), 655u);
  EXPECT_EQ(rows[2].size(), 655u);
  EXPECT_EQ(rows[2][4], "saxpy(int, float, const float *, float *)");
}

}  // namespace kopt::profile
