#pragma once
// The local headers a CUDA source depends on, for the build-cache key.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kopt::compile {

struct IncludeDirective {
  std::string name;    // "tile.h", "cutlass/gemm/device/gemm.h"
  bool angle = false;  // <...> rather than "..."
};
// The `#include` directives of a text (comments ignored; `#include MACRO` skipped). Pure.
std::vector<IncludeDirective> include_directives(std::string_view text);

struct LocalHeader {
  std::filesystem::path path;  // as resolved (lexically normal, absolute)
  std::string text;
};

// Follows includes from `source` recursively and returns every header found, sorted by path, each once.
//   "x.h" is looked up beside the including file, then in the source's directory, then in include_dirs;
//   <x.h> is followed only when it is found in the source's directory (the candidate's own files);
//   system headers (<...> found elsewhere, or not found) are not followed; a "x.h" that is not found is
//   skipped (nvcc reports it). At most `max_headers` headers (an input error beyond).
Result<std::vector<LocalHeader>> collect_local_headers(const std::filesystem::path& source,
                                                       const std::vector<std::string>& include_dirs,
                                                       size_t max_headers = 20000);

}  // namespace kopt::compile
