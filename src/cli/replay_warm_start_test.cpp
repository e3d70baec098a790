#include "cli/replay_warm_start.h"

#include <gtest/gtest.h>

#include "search/annotations.h"
#include "search/testing.h"

namespace kopt::cli {
namespace {

search::SearchSpace small_space() {
  auto a = search::parse_annotations(search::testing::kSmallSpaceKernel, "k.cu");
  EXPECT_TRUE(a.ok());
  search::SpaceOptions o;
  o.offer_flag_methods = false;
  auto s = search::build_space(*a, search::testing::test_registry(), o);
  EXPECT_TRUE(s.ok());
  return *s;
}

// The table's rows as the loop stores its records: params by name, guards by method id, failed rows left out.
TEST(ReplayWarmStart, RowsBecomeRecordsAsTheLoopStoresThem) {
  auto t = search::parse_measured_table(
      "index,A,B,KOPT_VECTORIZED_ACCESS,KOPT_SMEM_PADDING,status,median_ms\n0,4,5,1,1,ok,1.5\n1,2,2,0,0,wrong_result,\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto rs = records_from_table(*t, {{"N", 4096}}, small_space(), 7);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].key.config, util::Json::parse(R"({"params": {"A": 4, "B": 5},
      "guards": {"vectorized_access": true, "smem_padding": true}})"));
  EXPECT_EQ(rs[0].key.dims, (Dims{{"N", 4096}}));
  EXPECT_EQ(rs[0].id, 2);  // its line
  EXPECT_EQ(rs[0].recorded_unix_s, 7);
  EXPECT_EQ(rs[0].median_ms, 1.5);
  EXPECT_EQ(rs[0].verdict, db::Verdict::kCorrect);
}

TEST(ReplayWarmStart, DimsLists) {
  auto d = parse_dims_list("M=4096,N=2048 K=8", "--dims");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, (Dims{{"K", 8}, {"M", 4096}, {"N", 2048}}));
  EXPECT_NE(parse_dims_list("", "--dims").error().message.find("--dims needs dimensions NAME=VALUE"), std::string::npos);
  EXPECT_NE(parse_dims_list("M=1,M=2", "--dims").error().message.find("given twice"), std::string::npos);
}

}  // namespace
}  // namespace kopt::cli
