#include "sass/pattern.h"

#include <gtest/gtest.h>

namespace kopt::sass {
namespace {

bool m(const char* pattern, const char* token) {
  auto p = parse_pattern(pattern);
  EXPECT_TRUE(p.ok()) << pattern;
  return p.ok() && matches(*p, token);
}

TEST(SassPattern, ModifiersMatchInOrder) {
  EXPECT_TRUE(m("LDG.E.128", "LDG.E.128"));
  EXPECT_TRUE(m("LDG.E.128", "LDG.E.128.CONSTANT"));
  EXPECT_FALSE(m("LDG.E.128", "LDG.E"));
  EXPECT_FALSE(m("LDG.E.128", "LDG.E.64"));
  EXPECT_TRUE(m("LDG.E", "LDG.E.128.CONSTANT"));   // fewer modifiers: a wider match
  EXPECT_TRUE(m("LDG.128", "LDG.E.128.CONSTANT"));  // in order, not necessarily adjacent
  EXPECT_FALSE(m("LDG.CONSTANT.E", "LDG.E.128.CONSTANT"));  // out of order
  EXPECT_TRUE(m("LDGSTS", "LDGSTS.E.BYPASS.128"));
  EXPECT_TRUE(m("HGMMA.64x8x16", "HGMMA.64x8x16.F32"));
}

TEST(SassPattern, OpcodeIsAWholeWord) {
  EXPECT_TRUE(m("HMMA", "HMMA.16816.F32"));
  EXPECT_FALSE(m("HMMA", "XHMMA"));
  EXPECT_FALSE(m("HMMA", "HMMAX.16816"));
  EXPECT_FALSE(m("LDG", "LDGSTS.E.BYPASS.128"));
  EXPECT_FALSE(m("LDG", "LDGDEPBAR"));
  EXPECT_FALSE(m("BAR", "LDGDEPBAR"));
  EXPECT_TRUE(m("LDL", "LDL.LU.64"));
}

TEST(SassPattern, ModifiersAreWholeWordsToo) {
  EXPECT_FALSE(m("LDG.E.12", "LDG.E.128"));
  EXPECT_FALSE(m("STG.E.128", "STG.E.1280"));
}

TEST(SassPattern, RejectsMalformedPatterns) {
  EXPECT_FALSE(parse_pattern("").ok());
  EXPECT_FALSE(parse_pattern("LDG..E").ok());
  EXPECT_FALSE(parse_pattern("LDG.E.").ok());
  EXPECT_FALSE(parse_pattern("LDG E").ok());
  EXPECT_FALSE(parse_pattern("ldg.e.128").ok());  // opcodes are upper case
  auto err = parse_pattern("LDG*");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("'*'"), std::string::npos);
}

}  // namespace
}  // namespace kopt::sass
