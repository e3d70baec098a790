#pragma once
// Parsing `cuobjdump --dump-sass` listings: functions split by "Function : <name>", one Instruction per
// "/*0040*/  @!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;" line. Pure: text in, values out.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::sass {

struct Instruction {
  uint64_t address = 0;               // from /*0040*/
  std::string predicate;              // "@P0", "@!P0", "@!PT", or empty
  std::string opcode;                 // the whole token with modifiers, "LDG.E.128.CONSTANT"
  std::vector<std::string> operands;  // split at top-level commas, trimmed: "R4", "desc[UR4][R2.64]"
  std::string text;                   // the instruction as printed, without address and encoding
  // "@!PT" predicates an instruction that never executes (ptxas pads with "@!PT LDS RZ, [RZ]"); such
  // instructions are listed but count nowhere: not in the mix, not in method verification.
  bool never_executes() const { return predicate == "@!PT"; }
};

struct SassFunction {
  std::string arch;       // "sm_90a", from the enclosing "code for sm_90a" / "arch = sm_90a"
  std::string mangled;    // as printed after "Function :"
  std::string demangled;  // abi::__cxa_demangle, or the mangled name when it is not a C++ name
  std::vector<Instruction> instructions;
};

// One instruction line; nullopt for anything else (encoding-only lines, headers, blank lines).
std::optional<Instruction> parse_instruction_line(std::string_view line);
// The whole listing, functions in the order printed. A library built for several archs lists a function
// once per arch.
std::vector<SassFunction> parse_sass_listing(std::string_view text);

}  // namespace kopt::sass
