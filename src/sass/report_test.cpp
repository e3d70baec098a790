#include "sass/report.h"

#include <gtest/gtest.h>

#include "sass/kernels.h"
#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::sass {
namespace {

SassReport spill_report() {
  SassReport r;
  r.source = "spill.cu";
  r.arch = "sm_90";
  auto listing = util::read_file(testing_support::test_data_dir() + "/sass/cuobjdump-13.5/spill.sass.txt");
  auto ptxas = util::read_file(testing_support::test_data_dir() + "/compile/nvcc-13.0/spill_ptxas_v.txt");
  EXPECT_TRUE(listing.ok() && ptxas.ok());
  r.analysis.binary = "/cache/ab/abcd/kernel.so";
  r.analysis.functions = parse_sass_listing(*listing);
  r.analysis.wanted = {"heavy"};
  r.analysis.selected = {0};
  r.resources = compile::parse_ptxas_verbose(*ptxas);
  Signature no_spills;
  no_spills.forbid = {"LDL", "STL"};
  r.methods.push_back({"no_spills", *verify(no_spills, r.analysis.selected_functions())});
  return r;
}

TEST(SassReport, TextNamesKernelResourcesMixAndVerdicts) {
  std::string t = format_text(spill_report());
  EXPECT_NE(t.find("kopt sass: spill.cu (sm_90)"), std::string::npos) << t;
  EXPECT_NE(t.find("kernel heavy(float const*, float*, int)  [sm_90]"), std::string::npos) << t;
  EXPECT_NE(t.find("32 registers, 0 barriers, shared 0 B, stack 200 B, spills 360 B stored / 384 B loaded  <- SPILLS"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("    LDL            95   local-memory loads"), std::string::npos) << t;
  EXPECT_NE(t.find("  no_spills        fail"), std::string::npos) << t;
  EXPECT_NE(t.find("      NO  forbid       STL                x89          heavy /*0230*/ STL [R1+0x50], R25\n"),
            std::string::npos)
      << t;
}

TEST(SassReport, JsonAndShownFunctions) {
  auto r = spill_report();
  auto j = to_json(r);
  EXPECT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["resources"]["spill_store_bytes"], 360);
  EXPECT_EQ(j["kernels"][0]["instruction_mix"]["STL"], 89);
  EXPECT_EQ(j["methods"]["no_spills"]["status"], "fail");
  EXPECT_TRUE(j["compile"].is_null());
  // Nothing looked for (--lib without names): every function is shown, none is selected for verification.
  r.analysis.wanted.clear();
  r.analysis.selected.clear();
  EXPECT_EQ(shown_functions(r).size(), 1u);
}

}  // namespace
}  // namespace kopt::sass
