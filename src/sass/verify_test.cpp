#include "sass/verify.h"

#include <gtest/gtest.h>

#include "sass/kernels.h"
#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::sass {
namespace {

std::vector<SassFunction> listing(const std::string& rel) {
  auto t = util::read_file(testing_support::test_data_dir() + "/sass/" + rel);
  EXPECT_TRUE(t.ok()) << rel;
  return parse_sass_listing(t ? *t : "");
}

Signature vectorized() {
  Signature s;
  s.require_any = {"LDG.E.128", "STG.E.128"};
  return s;
}

Verification check(const Signature& sig, const std::vector<SassFunction>& all, const std::vector<std::string>& names) {
  auto v = verify(sig, select_functions(all, names).functions);
  EXPECT_TRUE(v.ok());
  return v ? *v : Verification{};
}

TEST(SassVerify, VectorizedSignaturePassesFloat4AndFailsScalar) {
  auto fns = listing("cuobjdump-13.5/vec.sass.txt");
  auto pass = check(vectorized(), fns, {"copy4"});
  EXPECT_EQ(pass.status, VerifyStatus::kPass) << pass.message;
  ASSERT_EQ(pass.checks.size(), 2u);
  EXPECT_EQ(pass.checks[0].count, 1);
  ASSERT_EQ(pass.checks[0].examples.size(), 1u);
  EXPECT_EQ(pass.checks[0].examples[0].address, 0xc0u);
  EXPECT_EQ(pass.checks[0].examples[0].instruction, "LDG.E.128.CONSTANT R8, desc[UR4][R4.64]");
  EXPECT_EQ(pass.checks[0].examples[0].function, "copy4(float4 const*, float4*, int)");
  EXPECT_EQ(pass.message, "found LDG.E.128 x1, STG.E.128 x1");

  auto fail = check(vectorized(), fns, {"copy1"});
  EXPECT_EQ(fail.status, VerifyStatus::kFail);
  EXPECT_EQ(fail.message, "none of LDG.E.128, STG.E.128 appears");
  EXPECT_EQ(fail.functions, std::vector<std::string>{"copy1(float const*, float*, int) [sm_90]"});
}

TEST(SassVerify, ForbiddenSpillsAreReportedWithTheirAddress) {
  Signature no_spills;
  no_spills.forbid = {"LDL", "STL"};
  auto v = check(no_spills, listing("cuobjdump-13.5/spill.sass.txt"), {"heavy"});
  EXPECT_EQ(v.status, VerifyStatus::kFail);
  ASSERT_EQ(v.checks.size(), 2u);
  EXPECT_EQ(v.checks[0].count, 95);
  EXPECT_EQ(v.checks[1].count, 89);
  EXPECT_EQ(v.checks[1].examples.size(), kMaxExamples);
  EXPECT_EQ(v.checks[1].examples[0].address, 0x230u);
  EXPECT_NE(v.message.find("forbidden STL appears 89 times (first in heavy(float const*, float*, int) at /*0230*/)"),
            std::string::npos)
      << v.message;

  auto clean = check(no_spills, listing("cuobjdump-13.5/vec.sass.txt"), {"copy4"});
  EXPECT_EQ(clean.status, VerifyStatus::kPass);
  EXPECT_EQ(clean.message, "no forbidden instruction appears");
}

TEST(SassVerify, RequireAllAndMinCounts) {
  Signature async_copy;
  async_copy.require_all = {"LDGSTS", "LDGDEPBAR"};
  EXPECT_EQ(check(async_copy, listing("cuobjdump-13.5/cpasync.sass.txt"), {"stage_copy"}).status, VerifyStatus::kPass);
  EXPECT_EQ(check(async_copy, listing("cuobjdump-13.5/vec.sass.txt"), {"copy4"}).status, VerifyStatus::kFail);

  auto wmma = listing("cuobjdump-13.5/wmma.sass.txt");
  Signature two_mma;
  two_mma.min_counts = {{"HMMA.16816", 2}};
  EXPECT_EQ(check(two_mma, wmma, {"wmma_tile"}).status, VerifyStatus::kPass);
  Signature three_mma;
  three_mma.min_counts = {{"HMMA", 3}};
  auto v = check(three_mma, wmma, {"wmma_tile"});
  EXPECT_EQ(v.status, VerifyStatus::kFail);
  EXPECT_EQ(v.message, "HMMA appears 2 times in one function, fewer than 3");
}

TEST(SassVerify, DeadPaddingInstructionsDoNotCount) {
  Signature no_lds;
  no_lds.forbid = {"LDS"};
  auto v = check(no_lds, listing("cuobjdump-13.5/cpasync.sass.txt"), {"stage_copy"});
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].count, 1);  // LDS.128 only; not the three "@!PT LDS RZ, [RZ]"
}

TEST(SassVerify, StatusesForNothingToCheck) {
  auto fns = listing("cuobjdump-13.5/vec.sass.txt");
  EXPECT_EQ(check(Signature{}, fns, {"copy4"}).status, VerifyStatus::kNotApplicable);
  auto none = check(vectorized(), fns, {"no_such_kernel"});
  EXPECT_EQ(none.status, VerifyStatus::kInconclusive);
  EXPECT_EQ(to_string(VerifyStatus::kToolError), "tool_error");
  EXPECT_FALSE(describe(VerifyStatus::kInconclusive).empty());
}

TEST(SassVerify, MalformedPatternIsAnInputError) {
  Signature bad;
  bad.require_any = {"ldg.e.128"};
  auto v = verify(bad, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ExitCode::kInput);
}

TEST(SassVerify, JsonCarriesEvidence) {
  auto fns = listing("cuobjdump-13.5/vec.sass.txt");
  auto j = to_json(check(vectorized(), fns, {"copy4"}));
  EXPECT_EQ(j["status"], "pass");
  EXPECT_EQ(j["checks"][0]["examples"][0]["address"], "00c0");
  EXPECT_EQ(j["checks"][1]["pattern"], "STG.E.128");
}

}  // namespace
}  // namespace kopt::sass
