#include "sass/signature_lookup.h"

#include <gtest/gtest.h>

namespace kopt::sass {
namespace {

TEST(SassSignatureLookup, FromJson) {
  auto j = util::Json::parse(R"({"meta": {"kind": "x"}, "vec4": {"require_any": ["LDG.E.128"]},
                                 "no_spills": {"forbid": ["LDL", "STL"]}})");
  auto lookup = lookup_from_json(j);
  ASSERT_TRUE(lookup.ok());
  auto vec4 = (*lookup)("vec4");
  ASSERT_TRUE(vec4.ok());
  EXPECT_EQ(vec4->require_any, std::vector<std::string>{"LDG.E.128"});
  auto unknown = (*lookup)("tma");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "no signature for method 'tma' (the file has: no_spills, vec4)");

  EXPECT_FALSE(lookup_from_json(util::Json::array()).ok());
  auto bad = lookup_from_json(util::Json::parse(R"({"x": {"require": ["LDG"]}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("signature of 'x'"), std::string::npos);
}

TEST(SassSignatureLookup, FirstThenSecond) {
  auto file = *lookup_from_json(util::Json::parse(R"({"vec4": {"require_any": ["LDG.E.128"]}})"));
  SignatureLookup registry = [](const std::string& id) -> Result<Signature> {
    if (id == "tensor_core") return Signature{{"HMMA"}, {}, {}, {}};
    return input_error("unknown method '" + id + "'");
  };
  auto both = first_then(file, registry);
  EXPECT_EQ(both("vec4")->require_any, std::vector<std::string>{"LDG.E.128"});
  EXPECT_EQ(both("tensor_core")->require_any, std::vector<std::string>{"HMMA"});
  auto neither = both("tma");
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.error().message.find("unknown method 'tma'"), std::string::npos);
  EXPECT_NE(neither.error().message.find("the file has: vec4"), std::string::npos);
  EXPECT_TRUE(first_then({}, registry)("tensor_core").ok());
  EXPECT_FALSE(first_then({}, {})("x").ok());
}

}  // namespace
}  // namespace kopt::sass
