#include "sass/listing.h"

#include <gtest/gtest.h>

#include "util/fs.h"
#include "testing/test_support.h"

namespace kopt::sass {
namespace {

std::string data(const std::string& rel) {
  auto t = util::read_file(testing_support::test_data_dir() + "/sass/" + rel);
  EXPECT_TRUE(t.ok()) << rel;
  return t ? *t : "";
}

TEST(SassListing, ParsesAnInstructionLine) {
  auto ins = parse_instruction_line(
      "        /*00d0*/                   LDG.E R2, desc[UR4][R2.64] ;        /* 0x0000000402027981 */");
  ASSERT_TRUE(ins);
  EXPECT_EQ(ins->address, 0xd0u);
  EXPECT_EQ(ins->predicate, "");
  EXPECT_EQ(ins->opcode, "LDG.E");
  ASSERT_EQ(ins->operands.size(), 2u);
  EXPECT_EQ(ins->operands[0], "R2");
  EXPECT_EQ(ins->operands[1], "desc[UR4][R2.64]");
  EXPECT_EQ(ins->text, "LDG.E R2, desc[UR4][R2.64]");
}

TEST(SassListing, ParsesPredicatesAndOperandsWithoutSpaceBeforeSemicolon) {
  auto exit_ins = parse_instruction_line("        /*0070*/               @P0 EXIT ;     /* 0x000000000000094d */");
  ASSERT_TRUE(exit_ins);
  EXPECT_EQ(exit_ins->predicate, "@P0");
  EXPECT_EQ(exit_ins->opcode, "EXIT");
  EXPECT_TRUE(exit_ins->operands.empty());

  auto bra = parse_instruction_line("        /*0130*/                   BRA 0x130;      /* 0xfffffffc00fc7947 */");
  ASSERT_TRUE(bra);
  EXPECT_EQ(bra->opcode, "BRA");
  ASSERT_EQ(bra->operands.size(), 1u);
  EXPECT_EQ(bra->operands[0], "0x130");

  auto dead = parse_instruction_line("        /*0100*/              @!PT LDS RZ, [RZ] ;    /* 0x00000000fffff984 */");
  ASSERT_TRUE(dead);
  EXPECT_EQ(dead->predicate, "@!PT");
  EXPECT_TRUE(dead->never_executes());

  auto hgmma = parse_instruction_line(
      "        /*0280*/                   HGMMA.64x8x16.F32 R24, gdesc[UR12], RZ, !UPT, gsb0 ;  /* 0x000000000c1879f0 */");
  ASSERT_TRUE(hgmma);
  EXPECT_EQ(hgmma->opcode, "HGMMA.64x8x16.F32");
  EXPECT_EQ(hgmma->operands.size(), 5u);
}

TEST(SassListing, RejectsEncodingAndHeaderLines) {
  EXPECT_FALSE(parse_instruction_line("                                       /* 0x000fe20000000800 */"));
  EXPECT_FALSE(parse_instruction_line("\t.headerflags\t@\"EF_CUDA_SM90\""));
  EXPECT_FALSE(parse_instruction_line("\t\tFunction : _Z5saxpyifPKfPf"));
  EXPECT_FALSE(parse_instruction_line(""));
}

TEST(SassListing, ParsesTheH200Capture) {
  auto fns = parse_sass_listing(data("h200/saxpy_sm90a.sass.txt"));
  ASSERT_EQ(fns.size(), 1u);
  const auto& f = fns[0];
  EXPECT_EQ(f.mangled, "_Z5saxpyifPKfPf");
  EXPECT_EQ(f.demangled, "saxpy(int, float, float const*, float*)");
  EXPECT_EQ(f.arch, "sm_90a");
  ASSERT_EQ(f.instructions.size(), 32u);  // every /*addr*/ line of the listing
  EXPECT_EQ(f.instructions[0].opcode, "LDC");
  EXPECT_EQ(f.instructions[0].operands[1], "c[0x0][0x28]");
  EXPECT_EQ(f.instructions[7].address, 0x70u);
  EXPECT_EQ(f.instructions[7].predicate, "@P0");
  EXPECT_EQ(f.instructions[13].opcode, "LDG.E");
  EXPECT_EQ(f.instructions[16].opcode, "FFMA");
  EXPECT_EQ(f.instructions[17].opcode, "STG.E");
  EXPECT_EQ(f.instructions.back().address, 0x1f0u);
}

TEST(SassListing, SplitsFunctionsAndArchs) {
  auto vec = parse_sass_listing(data("cuobjdump-13.5/vec.sass.txt"));
  ASSERT_EQ(vec.size(), 2u);
  EXPECT_EQ(vec[0].demangled, "copy1(float const*, float*, int)");
  EXPECT_EQ(vec[1].demangled, "copy4(float4 const*, float4*, int)");
  EXPECT_EQ(vec[0].instructions.size(), 32u);
  EXPECT_EQ(vec[1].instructions.size(), 32u);

  auto multi = parse_sass_listing(data("cuobjdump-13.5/fn.sass.txt"));
  ASSERT_EQ(multi.size(), 2u);
  EXPECT_EQ(multi[0].arch, "sm_80");
  EXPECT_EQ(multi[1].arch, "sm_90");
  EXPECT_EQ(multi[0].mangled, multi[1].mangled);
  EXPECT_EQ(multi[0].instructions.size() + multi[1].instructions.size(), 88u);
}

TEST(SassListing, AHostOnlyListingHasNoFunctions) {
  EXPECT_TRUE(parse_sass_listing("").empty());
  EXPECT_TRUE(parse_sass_listing("\nFatbin ptx code:\n================\narch = sm_90\n").empty());
}

}  // namespace
}  // namespace kopt::sass
