#include "runner/code_flush.h"

#include <fmt/format.h>

namespace kopt::runner {

std::string code_flush_ptx(int steps) {
  std::string ptx = fmt::format(
      ".version 7.8\n.target sm_90\n.address_size 64\n\n"
      ".visible .entry {0}(\n\t.param .u64 {0}_param_0,\n\t.param .u32 {0}_param_1\n)\n{{\n"
      "\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<4>;\n\t.reg .b64 \t%rd<3>;\n\n"
      "\tld.param.u64 \t%rd1, [{0}_param_0];\n\tld.param.u32 \t%r1, [{0}_param_1];\n"
      "\tmov.u32 \t%r2, %tid.x;\n\txor.b32 \t%r1, %r1, %r2;\n",
      kCodeFlushEntry);
  ptx.reserve(ptx.size() + static_cast<size_t>(steps) * 120 + 200);
  for (int i = 0; i < steps; ++i) {
    // Shift counts (13, 17, 5) move with the step: a different xorshift each time.
    const int a = 1 + i % 15, b = 1 + (i * 7) % 19, c = 1 + (i * 11) % 13;
    ptx += fmt::format(
        "\tshl.b32 \t%r2, %r1, {};\n\txor.b32 \t%r1, %r1, %r2;\n\tshr.u32 \t%r2, %r1, {};\n\txor.b32 \t%r1, %r1, %r2;\n"
        "\tshl.b32 \t%r2, %r1, {};\n\txor.b32 \t%r1, %r1, %r2;\n",
        a, b, c);
  }
  ptx += fmt::format(
      "\tsetp.ne.s32 \t%p1, %r1, 1663525;\n\t@%p1 bra \t$L__done;\n"
      "\tcvta.to.global.u64 \t%rd2, %rd1;\n\tst.global.u32 \t[%rd2], %r1;\n$L__done:\n\tret;\n}}\n");
  return ptx;
}

}  // namespace kopt::runner
