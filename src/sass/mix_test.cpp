#include "sass/mix.h"

#include <gtest/gtest.h>

#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::sass {
namespace {

std::vector<SassFunction> listing(const std::string& rel) {
  auto t = util::read_file(testing_support::test_data_dir() + "/sass/" + rel);
  EXPECT_TRUE(t.ok()) << rel;
  return parse_sass_listing(t ? *t : "");
}

TEST(SassMix, AccessWidths) {
  EXPECT_EQ(access_width_bits("LDG.E"), 32);
  EXPECT_EQ(access_width_bits("LDG.E.CONSTANT"), 32);
  EXPECT_EQ(access_width_bits("LDG.E.64"), 64);
  EXPECT_EQ(access_width_bits("LDG.E.128.CONSTANT"), 128);
  EXPECT_EQ(access_width_bits("LDG.E.U8"), 8);
  EXPECT_EQ(access_width_bits("STG.E.S16"), 16);
  EXPECT_EQ(access_width_bits("LDS.128"), 128);
}

TEST(SassMix, ScalarAndVectorCopies) {
  auto fns = listing("cuobjdump-13.5/vec.sass.txt");
  ASSERT_EQ(fns.size(), 2u);
  auto scalar = instruction_mix(fns[0]);
  EXPECT_EQ(scalar.count("LDG.32"), 1);
  EXPECT_EQ(scalar.count("STG.32"), 1);
  EXPECT_EQ(scalar.count("LDG.128"), 0);
  auto vec = instruction_mix(fns[1]);
  EXPECT_EQ(vec.count("LDG.128"), 1);
  EXPECT_EQ(vec.count("STG.128"), 1);
  EXPECT_EQ(vec.count("LDG.32"), 0);
  EXPECT_EQ(vec.count("no such class"), 0);
  // 32 listed instructions, of which the padding NOPs do not count.
  EXPECT_LT(vec.total, 32);
  EXPECT_GT(vec.total, 10);
}

TEST(SassMix, SpillsAsyncCopiesTensorCoresAndHopperOps) {
  auto spill = instruction_mix(listing("cuobjdump-13.5/spill.sass.txt").at(0));
  EXPECT_EQ(spill.count("LDL"), 95);  // 6 LDL + 88 LDL.LU + 1 LDL.LU.64
  EXPECT_EQ(spill.count("STL"), 89);
  EXPECT_EQ(spill.count("FFMA"), 95);
  EXPECT_EQ(spill.count("HFMA2"), 0);  // its one "HFMA2.MMA R28, -RZ, RZ, 0, 0" is a register move

  auto cp = instruction_mix(listing("cuobjdump-13.5/cpasync.sass.txt").at(0));
  EXPECT_EQ(cp.count("LDGSTS"), 1);
  EXPECT_EQ(cp.count("LDGDEPBAR"), 1);
  EXPECT_EQ(cp.count("BAR"), 1);
  EXPECT_EQ(cp.count("LDS"), 1);  // the three "@!PT LDS RZ, [RZ]" never execute
  EXPECT_EQ(cp.count("STG.128"), 1);

  auto wmma = instruction_mix(listing("cuobjdump-13.5/wmma.sass.txt").at(0));
  EXPECT_EQ(wmma.count("MMA"), 2);

  auto hopper = instruction_mix(listing("cuobjdump-13.5/hopper.sass.txt").at(0));
  EXPECT_EQ(hopper.count("GMMA"), 1);
  EXPECT_EQ(hopper.count("TMA"), 1);  // UBLKCP.S.G

  auto reduce = instruction_mix(listing("cuobjdump-13.5/smem.sass.txt").at(0));
  EXPECT_GT(reduce.count("BAR"), 1);
  EXPECT_GT(reduce.count("STS"), 0);
}

TEST(SassMix, JsonHoldsEveryClass) {
  auto j = to_json(instruction_mix(listing("h200/saxpy_sm90a.sass.txt").at(0)));
  EXPECT_EQ(j.size(), mix_classes().size() + 1);
  EXPECT_EQ(j["LDG.32"], 2);
  EXPECT_EQ(j["FFMA"], 1);
  EXPECT_EQ(j["STG.32"], 1);
}

}  // namespace
}  // namespace kopt::sass
