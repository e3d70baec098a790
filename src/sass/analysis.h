#pragma once
// One compiled candidate's SASS, ready for method verification: the listing (cuobjdump), the kernel
// functions selected from it, and the verdict for a signature. This is the entry point the loop and
// `kopt sass` use.
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "sass/dump.h"
#include "sass/listing.h"
#include "sass/signature.h"
#include "sass/verify.h"
#include "util/process.h"

namespace kopt::sass {

struct Analysis {
  std::filesystem::path binary;
  std::string tool_error;               // non-empty: cuobjdump missing or failed (every verdict: tool_error)
  std::vector<SassFunction> functions;  // the whole listing
  std::vector<std::string> wanted;      // the kernel names looked for
  std::vector<size_t> selected;         // indices into functions
  std::vector<std::string> unmatched;   // wanted names found in no function
  std::vector<const SassFunction*> selected_functions() const;
};

// Dumps `binary` and selects the functions named in `kernel_names` (see select_functions; `arch` empty:
// every arch). Never fails: a cuobjdump problem is recorded in tool_error.
Analysis analyze(const std::filesystem::path& binary, const std::vector<std::string>& kernel_names,
                 const std::string& arch, util::CommandRunner& runner, const DumpOptions& opts = {});

// The kernel names of a candidate: the __global__ functions of its source text, plus "cutlass::*"
// (kCutlassKernels) when `cutlass` is set or the source uses CUTLASS (compile::configure_cutlass's test).
std::vector<std::string> kernel_names_from_source(const std::filesystem::path& source, bool cutlass = false);

// tool_error when the dump failed, inconclusive when nothing was selected (the message lists what was
// looked for and what the library holds), else verify(). Input error for a malformed pattern.
Result<Verification> verify_method(const Analysis& a, const Signature& sig);

}  // namespace kopt::sass
