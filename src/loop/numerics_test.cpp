#include "loop/numerics.h"

#include <gtest/gtest.h>

namespace kopt::loop {

static util::Json result(double abs_err, double l2) {
  return {{"seeds", {{{"seed", 0}, {"outputs", {{"C", {{"max_abs_err", abs_err}, {"rel_l2_err", l2}}}}}}}}};
}

TEST(Strict, NoErrorLargerThanTheBaselines) {
  EXPECT_TRUE(judge_strict(result(1e-5, 1e-7), result(1e-5, 1e-7)).ok);
  EXPECT_TRUE(judge_strict(result(0, 0), result(1e-5, 1e-7)).ok);
  auto worse = judge_strict(result(2e-5, 1e-7), result(1e-5, 1e-7));
  EXPECT_FALSE(worse.ok);
  EXPECT_NE(worse.reason.find("max_abs_err"), std::string::npos) << worse.reason;
  EXPECT_FALSE(judge_strict(result(1e-5, 2e-7), result(1e-5, 1e-7)).ok);
  util::Json nan = {{"seeds", {{{"seed", 0}, {"outputs", {{"C", {{"max_abs_err", "nan"}, {"rel_l2_err", 0}}}}}}}}};
  EXPECT_FALSE(judge_strict(nan, result(1e-5, 1e-7)).ok);
  EXPECT_FALSE(judge_strict(util::Json::object(), result(1, 1)).ok);
}

}  // namespace kopt::loop
