#pragma once
// CUTLASS compiles: recognising a CUTLASS source and giving its request what CUTLASS needs (headers,
// -std=c++17, --expt-relaxed-constexpr, -DNDEBUG, an arch-specific target, several GiB of memory per nvcc).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "compile/request.h"

namespace kopt::compile {

// Peak nvcc memory of a CUTLASS 3.x sm90 GEMM: 3.3 GB measured (examples/cutlass_gemm, nvcc 13.0, GNU time's
// maximum resident set size), so --compile-jobs auto runs one compile per 4 GiB of free memory.
inline constexpr uint64_t kCutlassJobMemBytes = 4ull << 30;

// True when the text includes a CUTLASS or CuTe header: #include <cutlass/...> or <cute/...> (or "...").
// Comments are ignored. Pure.
bool uses_cutlass(std::string_view source_text);

// The target a CUTLASS compile uses: a plain sm_<NN> with NN >= 90 gets its arch-specific variant ("sm_90"
// -> "sm_90a"): CUTLASS's Hopper and Blackwell kernels (TMA, wgmma, setmaxnreg) are compiled only for it and
// trap at run time otherwise. Anything else is kept. Pure.
std::string cutlass_arch(const std::string& arch);

// Makes `req` a CUTLASS compile (pure): `cutlass` set; arch via cutlass_arch; `include_dir` appended to
// include_dirs unless empty or already there; -std=c++17, --expt-relaxed-constexpr and -DNDEBUG placed before
// the request's own extra flags, each unless those already say it (a -std=/--std, the same flag, an -U/-D of
// NDEBUG, or a NDEBUG define); est_mem_bytes raised to kCutlassJobMemBytes.
// -DNDEBUG matters: CUTLASS's device-side assert() calls make ptxas serialize wgmma (warning C7510).
void apply_cutlass(CompileRequest& req, const std::string& include_dir);

// uses_cutlass over the source and the headers of its own folder that it includes (read from disk; an
// unreadable source is not CUTLASS).
bool is_cutlass_source(const std::filesystem::path& source);

// When `forced` (--cutlass-include) or is_cutlass_source(req.source):
// apply_cutlass with no extra folder when an include dir already holds cutlass/cutlass.h, else with
// toolchain::find_cutlass_include()'s (nothing when it finds none: the compile then fails naming the fixes).
// Returns whether the request is a CUTLASS compile.
bool configure_cutlass(CompileRequest& req, bool forced);

// For a CUTLASS request whose headers are nowhere nvcc would look (its include dirs and -I flags, the
// source's folder, CPATH / CPLUS_INCLUDE_PATH, /usr/include, /usr/local/include, the CUDA include folder):
// a message naming the fixes. Empty otherwise.
std::string cutlass_headers_problem(const CompileRequest& req);

}  // namespace kopt::compile
