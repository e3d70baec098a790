#pragma once
// What the compile pool is asked to build, and what it reports back for each candidate.
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compile/resources.h"
#include "util/json_io.h"

namespace kopt::compile {

struct CompileRequest {
  std::string name;                            // the candidate's name, for progress and logs
  std::filesystem::path source;                // the .cu file
  std::vector<std::string> extra_flags;        // appended to nvcc's flags, e.g. "-maxrregcount=32"
  std::map<std::string, std::string> defines;  // -DNAME=VALUE (params, method guards KOPT_<ID>); "" -> -DNAME
  std::string arch = "sm_90";                  // "sm_90" -> -arch=sm_90; "sm_90a" -> -gencode (see command.h)
  std::vector<std::string> include_dirs;       // -I, after the source's own directory
  double timeout_s = 600;                      // per compile; 0: none
  std::filesystem::path cache_dir;             // empty: default_cache_dir()
  std::filesystem::path out_dir;               // where kernel.so and compile.log are placed; may be empty
  size_t est_mem_bytes = 0;                    // peak nvcc memory, for --compile-jobs auto; 0: 1 GiB
  bool cutlass = false;                        // a CUTLASS compile (compile/cutlass.h configures it)
};

enum class CompileStatus { kOk, kFailed, kTimedOut, kToolMissing };
std::string_view to_string(CompileStatus s);  // "ok", "failed", "timed_out", "tool_missing"
std::string_view describe(CompileStatus s);

struct CompileResult {
  std::string name;
  CompileStatus status = CompileStatus::kFailed;
  bool cache_hit = false;
  std::filesystem::path library;   // the .so to dlopen: out_dir/kernel.so when out_dir is set, else in the cache
  std::string log_text;            // the command line, nvcc's output and the outcome
  std::filesystem::path log_path;  // out_dir/compile.log, or the cache entry's log; empty if neither
  std::vector<KernelResources> resources;  // from ptxas -v, one per function (and arch)
  std::string cache_key;
  double compile_ms = 0;           // wall time this request took now (a cache hit: the lookup only)
  bool ok() const { return status == CompileStatus::kOk; }
};

util::Json to_json(const CompileResult& r);

// The define that turns a method on in a candidate's source: "vec4" -> "KOPT_VEC4", "cp-async" ->
// "KOPT_CP_ASYNC" (upper case; every character but letters and digits becomes '_').
std::string method_guard(std::string_view method_id);

}  // namespace kopt::compile
