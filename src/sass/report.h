#pragma once
// What `kopt sass` prints and writes: per-kernel resources, instruction mix and method verdicts. Pure.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/request.h"
#include "sass/analysis.h"
#include "sass/verify.h"

namespace kopt::sass {

struct MethodVerdict {
  std::string method;
  Verification verification;
};

struct SassReport {
  std::string source;  // empty with --lib alone
  std::string arch;
  std::optional<compile::CompileResult> compile;  // absent with --lib
  std::vector<compile::KernelResources> resources;
  Analysis analysis;
  std::vector<MethodVerdict> methods;
};

// The functions the report shows: the selected kernels, or every function when no name was looked for.
std::vector<const SassFunction*> shown_functions(const SassReport& r);
std::string format_text(const SassReport& r);
util::Json to_json(const SassReport& r);

}  // namespace kopt::sass
