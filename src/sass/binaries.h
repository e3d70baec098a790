#pragma once
// One Analysis over several binaries: a Triton candidate compiles into one cubin per @triton.jit kernel it
// launches (docs/TRITON.md), and its methods are verified over all of them together.
#include <filesystem>
#include <string>
#include <vector>

#include "sass/analysis.h"

namespace kopt::sass {

// Dumps every binary (a cubin or a library) and merges the listings in order. With `kernel_names` empty,
// every function (of `arch`, when given) is selected and `wanted` lists their names: a Triton cubin holds
// nothing but the kernel's own code, so there is no library code to leave out. Otherwise as analyze().
// The first cuobjdump failure is recorded in tool_error. `binary` is the first binary.
Analysis analyze_binaries(const std::vector<std::filesystem::path>& binaries, const std::vector<std::string>& kernel_names,
                          const std::string& arch, util::CommandRunner& runner, const DumpOptions& opts = {});

}  // namespace kopt::sass
