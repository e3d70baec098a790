#pragma once
// The nvcc command line of a candidate and its build-cache key. Pure.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "compile/request.h"
#include "core/result.h"

namespace kopt::compile {

// "sm_90" -> {"-arch=sm_90"}; an arch-specific target ("sm_90a", "sm_100f": a letter suffix) ->
// {"-gencode=arch=compute_90a,code=sm_90a"} (nvcc 13.0 mishandles the -arch=sm_90a shorthand: it builds
// for compute_90 and ptxas rejects wgmma/setmaxnreg). Anything but sm_<digits>[a-z]? is an input error.
Result<std::vector<std::string>> arch_flags(const std::string& arch);

// Every flag but the output and the source and its directory's -I:
//   -shared -Xcompiler -fPIC -O3 -lineinfo -Xptxas -v <arch> -DNAME=VALUE... -I<include_dir>... <extra_flags>
// These are what the cache key covers.
Result<std::vector<std::string>> nvcc_flags(const CompileRequest& req);
// nvcc <flags> -I<source dir> -o <output> <source>
std::vector<std::string> nvcc_argv(const std::string& nvcc, const std::vector<std::string>& flags,
                                   const std::filesystem::path& source, const std::filesystem::path& output);

struct KeyInputs {
  std::string nvcc_version;  // the full `nvcc --version` text
  std::vector<std::string> flags;
  std::vector<std::pair<std::string, std::string>> env;  // NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS when set
  std::string source_text;
  // Local headers: (name, text). The name is the path relative to the source's directory when the header
  // lies under it (so a candidate moved elsewhere with its headers keeps its key), else the absolute path.
  std::vector<std::pair<std::string, std::string>> headers;
};
// XXH3-128 hex over a format tag and every field of KeyInputs, each length-prefixed. Neither the source's
// path, the candidate's name, its out_dir nor its timeout enter the key.
std::string cache_key(const KeyInputs& in);

}  // namespace kopt::compile
