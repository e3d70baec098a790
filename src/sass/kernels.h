#pragma once
// Which functions of a SASS listing kopt checks: the kernels defined in the candidate's source (or names
// given explicitly), never the whole library.
#include <string>
#include <string_view>
#include <vector>

#include "sass/listing.h"

namespace kopt::sass {

// Names of the `__global__` functions declared or defined in CUDA source text, in order of appearance,
// without duplicates. Comments, string literals and preprocessor lines are ignored; `__launch_bounds__(..)`,
// `__cluster_dims__(..)`, `__maxnreg__(..)` and `__attribute__((..))` between `__global__` and the name are
// skipped. For "void ns::k(...)" the name is "k".
std::vector<std::string> global_function_names(std::string_view source_text);

// The wanted name that selects a CUTLASS library's kernels.
inline constexpr const char* kCutlassKernels = "cutlass::*";

struct Selection {
  std::vector<const SassFunction*> functions;  // the selected functions, in listing order
  std::vector<std::string> unmatched;          // wanted names that matched no function
};

// A function is selected when a wanted name equals its mangled name, its qualified name ("demo::reduce")
// or its base name ("reduce"), or when a wanted name ending in '*' is a prefix of its qualified name
// ("cutlass::*" selects cutlass::device_kernel<...>, cutlass::Kernel2<...>: the kernels of a CUTLASS library
// live in the headers, not in the candidate's source). When `arch` is not empty only functions of that arch
// are considered.
Selection select_functions(const std::vector<SassFunction>& all, const std::vector<std::string>& wanted,
                           const std::string& arch = "");

}  // namespace kopt::sass
