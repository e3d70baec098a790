#pragma once
// Verification of a method's SASS signature against the selected kernel functions. Pure.
//
// Rules, over the selected functions together (a library built for several archs lists each kernel once per
// arch; each copy counts as a function):
//   require_any  passes when at least one of its patterns matches at least one instruction;
//   require_all  passes when every one of its patterns matches at least one instruction;
//   forbid       passes when none of its patterns matches any instruction;
//   min_counts   passes when some single function holds at least N matching instructions.
// Instructions that never execute ("@!PT") are ignored.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sass/listing.h"
#include "sass/signature.h"
#include "util/json_io.h"

namespace kopt::sass {

enum class VerifyStatus { kPass, kFail, kInconclusive, kNotApplicable, kToolError };
std::string_view to_string(VerifyStatus s);   // "pass", "fail", "inconclusive", "not_applicable", "tool_error"
std::string_view describe(VerifyStatus s);    // one line for reports

struct Evidence {
  std::string function;  // demangled name
  std::string arch;
  uint64_t address = 0;
  std::string instruction;  // "LDG.E.128.CONSTANT R4, desc[UR4][R2.64]"
};

struct PatternCheck {
  std::string rule;     // "require_any", "require_all", "forbid", "min_count"
  std::string pattern;  // as written in the signature
  int count = 0;        // matches (min_count: in the function with the most)
  int min_count = 0;    // min_count rule only
  bool ok = false;      // this pattern's own condition (for require_any the rule passes if any pattern's does)
  std::vector<Evidence> examples;  // the first matches (at most kMaxExamples)
};
inline constexpr size_t kMaxExamples = 3;

struct Verification {
  VerifyStatus status = VerifyStatus::kInconclusive;
  std::string message;                      // one line: why this status
  std::vector<std::string> functions;       // the functions checked (demangled, with arch)
  std::vector<PatternCheck> checks;         // one per pattern of the signature
};

// Input error for a malformed pattern. not_applicable for an empty signature; inconclusive when no function
// was selected.
Result<Verification> verify(const Signature& sig, const std::vector<const SassFunction*>& functions);
Verification verification_error(VerifyStatus status, std::string message);  // tool_error / inconclusive
util::Json to_json(const Verification& v);

}  // namespace kopt::sass
