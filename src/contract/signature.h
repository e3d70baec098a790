#pragma once
// The kernel contract: `extern "C" void solve(...)` parsed from a .cu source.
#include <string>
#include <vector>

#include "contract/dtype.h"
#include "core/result.h"
#include "util/json_io.h"

namespace kopt::contract {

enum class ParamKind { kPointer, kScalar };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::kScalar;
  DType dtype = DType::kI32;
  bool is_const = false;     // pointers: const pointee -> input; non-const -> output (in-out allowed)
  std::string type_text;     // as written, normalised ("const float*")
  bool is_input() const { return kind == ParamKind::kPointer && is_const; }
  bool is_output() const { return kind == ParamKind::kPointer && !is_const; }
};

struct KernelSignature {
  std::vector<Param> params;
  int line = 0;             // 1-based line of `solve` in the source
  std::string normalised;   // canonical text, e.g. "void solve(const float* A, float* C, int n)"
};

// Parses the source text. Errors (exit 4) name what is wrong: no solve, not extern "C", an unknown type.
Result<KernelSignature> parse_solve_signature(const std::string& source, const std::string& filename = "kernel.cu");

// Removes // and /* */ comments, keeping line breaks (and string literals intact).
std::string strip_comments(const std::string& source);

util::Json to_json(const KernelSignature& sig);
Result<KernelSignature> signature_from_json(const util::Json& j);

}  // namespace kopt::contract
