#include "search/expr.h"

#include <gtest/gtest.h>

namespace kopt::search {
namespace {

int64_t eval(const std::string& text, const Bindings& b = {}) {
  auto e = Expr::parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message);
  if (!e) return INT64_MIN;
  auto v = e->eval(b);
  EXPECT_TRUE(v.ok()) << text << ": " << (v.ok() ? "" : v.error().message);
  return v.ok() ? v.value() : INT64_MIN;
}

std::string parse_error(const std::string& text) {
  auto e = Expr::parse(text);
  return e.ok() ? "" : e.error().message;
}

std::string eval_error(const std::string& text, const Bindings& b = {}) {
  auto e = Expr::parse(text);
  if (!e) return "parse: " + e.error().message;
  auto v = e->eval(b);
  return v.ok() ? "" : v.error().message;
}

TEST(Expr, ArithmeticFollowsCPrecedence) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 4 - 3"), 3);  // left associative
  EXPECT_EQ(eval("100 / 10 / 5"), 2);
  EXPECT_EQ(eval("17 % 5"), 2);
  EXPECT_EQ(eval("-7 / 2"), -3);  // truncates toward zero, like C
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_EQ(eval("- -3"), 3);
  EXPECT_EQ(eval("+4"), 4);
}

TEST(Expr, ComparisonsAndLogic) {
  EXPECT_EQ(eval("3 < 4"), 1);
  EXPECT_EQ(eval("3 >= 4"), 0);
  EXPECT_EQ(eval("1 + 1 == 2"), 1);  // arithmetic binds tighter than ==
  EXPECT_EQ(eval("2 != 2"), 0);
  EXPECT_EQ(eval("1 < 2 == 1"), 1);  // relational before equality
  EXPECT_EQ(eval("0 || 1 && 0"), 0); // && before ||
  EXPECT_EQ(eval("1 || 0 && 0"), 1);
  EXPECT_EQ(eval("!0"), 1);
  EXPECT_EQ(eval("!5"), 0);
  EXPECT_EQ(eval("!(2 > 1) || 7 <= 7"), 1);
}

TEST(Expr, NamesBindToValues) {
  Bindings b = {{"BM", 128}, {"BN", 64}, {"THREADS", 256}, {"KOPT_TENSOR_CORES", 0}, {"BK", 8}};
  EXPECT_EQ(eval("BM*BN <= 16384", b), 1);
  EXPECT_EQ(eval("BM*BN*4 <= 16384", b), 0);
  EXPECT_EQ(eval("THREADS % 32 == 0", b), 1);
  EXPECT_EQ(eval("KOPT_TENSOR_CORES == 0 || BK % 16 == 0", b), 1);
  b["KOPT_TENSOR_CORES"] = 1;
  EXPECT_EQ(eval("KOPT_TENSOR_CORES == 0 || BK % 16 == 0", b), 0);
  auto e = Expr::parse("BM*BN <= LIMIT && BM >= BN");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->names(), (std::vector<std::string>{"BM", "BN", "LIMIT"}));
  EXPECT_EQ(e->text(), "BM*BN <= LIMIT && BM >= BN");
}

TEST(Expr, UnknownNamesAreClearErrors) {
  std::string err = eval_error("BM * BX <= 100", {{"BM", 1}, {"BN", 2}});
  EXPECT_NE(err.find("unknown name 'BX'"), std::string::npos) << err;
  EXPECT_NE(err.find("known: BM, BN"), std::string::npos) << err;
  // Short-circuit: the right side is not evaluated when the left decides.
  EXPECT_EQ(eval("0 && UNBOUND", {}), 0);
  EXPECT_EQ(eval("1 || UNBOUND", {}), 1);
}

TEST(Expr, RuntimeErrors) {
  EXPECT_NE(eval_error("1 / (2 - 2)").find("division by zero"), std::string::npos);
  EXPECT_NE(eval_error("5 % 0").find("division by zero"), std::string::npos);
  EXPECT_NE(eval_error("9223372036854775807 + 1").find("overflow"), std::string::npos);
  EXPECT_NE(eval_error("4611686018427387904 * 4").find("overflow"), std::string::npos);
  auto e = Expr::parse("A / B");
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->holds({{"A", 1}, {"B", 0}}));  // an error never holds
  EXPECT_TRUE(e->holds({{"A", 4}, {"B", 2}}));
}

TEST(Expr, SyntaxErrorsNameTheColumn) {
  EXPECT_NE(parse_error("BM * ").find("column 6: expected a value, found the end"), std::string::npos) << parse_error("BM * ");
  EXPECT_NE(parse_error("(BM + 1").find("expected ')'"), std::string::npos);
  EXPECT_NE(parse_error("BM + 1)").find("column 7: unexpected ')'"), std::string::npos) << parse_error("BM + 1)");
  EXPECT_NE(parse_error("BM = 4").find("unexpected character '='"), std::string::npos);
  EXPECT_NE(parse_error("BM & 4").find("unexpected character '&'"), std::string::npos);
  EXPECT_NE(parse_error("0x10 > 1").find("not a decimal integer"), std::string::npos);
  EXPECT_NE(parse_error("99999999999999999999").find("too large"), std::string::npos);
  EXPECT_NE(parse_error("   ").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("BM BN").find("unexpected 'BN'"), std::string::npos);
}

}  // namespace
}  // namespace kopt::search

namespace kopt::search {
namespace {
TEST(Expr, SlotEvaluationMatchesNamedEvaluation) {
  auto e = Expr::parse("(BN + BM) * 2 <= LIMIT && !(BM % 3 == 1) || BM / BN > 4");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->slot_names(), (std::vector<std::string>{"BN", "BM", "LIMIT"}));
  for (int64_t bm = -3; bm <= 40; bm += 7) {
    for (int64_t bn = -2; bn <= 9; bn += 3) {
      for (int64_t limit : {0, 30, 100}) {
        auto named = e->eval({{"BM", bm}, {"BN", bn}, {"LIMIT", limit}});
        auto fast = e->eval_slots({bn, bm, limit});
        ASSERT_EQ(named.ok(), fast.has_value()) << bm << " " << bn;
        if (fast) {
          EXPECT_EQ(named.value(), *fast);
        }
      }
    }
  }
  EXPECT_FALSE(e->eval_slots({1}).has_value());  // missing values are an error, not a zero
}
}  // namespace
}  // namespace kopt::search
