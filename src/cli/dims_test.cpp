#include "cli/dims.h"

#include <gtest/gtest.h>

namespace kopt::cli {

TEST(Dims, ParsesNamedPositiveIntegers) {
  auto d = parse_dims({"--M=4096", "--N=128", "--K=1", "--batch_size=7"});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->at("M"), 4096);
  EXPECT_EQ(d->at("N"), 128);
  EXPECT_EQ(d->at("K"), 1);
  EXPECT_EQ(d->at("batch_size"), 7);
  EXPECT_EQ(format_dims(*d), "K=1 M=4096 N=128 batch_size=7");
}

TEST(Dims, RejectsBadValuesWithClearMessages) {
  auto not_int = parse_dims({"--M=abc"});
  ASSERT_FALSE(not_int.ok());
  EXPECT_EQ(not_int.error().code, ExitCode::kInput);
  EXPECT_NE(not_int.error().message.find("not an integer"), std::string::npos);
  auto frac = parse_dims({"--M=4.5"});
  ASSERT_FALSE(frac.ok());
  auto zero = parse_dims({"--N=0"});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("positive"), std::string::npos);
  auto neg = parse_dims({"--N=-3"});
  ASSERT_FALSE(neg.ok());
  auto big = parse_dims({"--N=99999999999999999999999"});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("too large"), std::string::npos);
  auto empty = parse_dims({"--N="});
  ASSERT_FALSE(empty.ok());
}

TEST(Dims, RejectsNamesThatAreNotIdentifiers) {
  for (const char* arg : {"--1M=4", "--M-N=4", "--=4", "--M.x=3"}) {
    auto d = parse_dims({arg});
    ASSERT_FALSE(d.ok()) << arg;
    EXPECT_NE(d.error().message.find("identifier"), std::string::npos) << arg << ": " << d.error().message;
  }
}

TEST(Dims, RejectsPositionalsMissingValuesAndDuplicates) {
  EXPECT_FALSE(parse_dims({"M=4"}).ok());
  auto noval = parse_dims({"--M"});
  ASSERT_FALSE(noval.ok());
  EXPECT_NE(noval.error().message.find("--M=VALUE"), std::string::npos);
  auto dup = parse_dims({"--M=4", "--M=8"});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("twice"), std::string::npos);
}

TEST(Dims, ANearMissOfAKnownOptionIsReportedAsMistypedOption) {
  auto d = parse_dims({"--iteration=3"}, {"iterations", "branches"});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("did you mean '--iterations'"), std::string::npos) << d.error().message;
  // Short names such as M are never mistaken for options.
  EXPECT_TRUE(parse_dims({"--M=3"}, {"ref", "json"}).ok());
}

}  // namespace kopt::cli
