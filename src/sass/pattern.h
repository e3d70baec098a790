#pragma once
// Instruction-token patterns of SASS signatures (see signature.h for the rules).
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kopt::sass {

struct Pattern {
  std::string text;                    // as written, "LDG.E.128"
  std::string opcode;                  // "LDG"
  std::vector<std::string> modifiers;  // {"E", "128"}
};

// A pattern is OPCODE[.MOD]*: the opcode upper-case letters, digits and '_' (SASS opcodes are upper case),
// modifiers letters, digits and '_' (case kept: "HGMMA.64x8x16.F32"). Anything else is an input error.
Result<Pattern> parse_pattern(std::string_view text);

// True when the instruction's opcode equals the pattern's and the pattern's modifiers appear among the
// instruction's modifiers in the same order (not necessarily adjacent). Comparison is exact (case kept).
// "LDG.E.128" matches "LDG.E.128.CONSTANT" but not "LDG.E"; "HMMA" never matches "XHMMA" or "HMMAX".
bool matches(const Pattern& pattern, std::string_view opcode_token);

}  // namespace kopt::sass
