#pragma once
// Deriving a search space from a kernel nobody annotated (docs/ANNOTATIONS.md, "Kernels without annotations").
//
// Pure: source text in, a Derivation out. What a kernel engineer would tune, read from the code as it is:
//   CUDA:   named integral constants (constexpr/const at namespace or function scope, static constexpr members,
//           `#define NAME <int>`) used in a launch, a template argument, a shared-memory size or a loop bound;
//           literal template arguments and literal block sizes at `<<<...>>>` sites (a `(n + B - 1) / B, B`
//           launch is one parameter) and literal `dim3` blocks (one parameter per dimension); `#pragma unroll N`; `__launch_bounds__(N[, M])`;
//           a constant declared once in each branch (one parameter per branch); a block size the launcher computes at
//           run time (0: the launcher's own; else 32..1024); literal arguments of launcher helpers (template or function
//           arguments); the grid of a kernel with a grid-stride loop. Per-thread arrays bound per-thread work (<= 64).
//   Triton: literal `tl.constexpr` keyword arguments and num_warps/num_stages at the launches in run_kernel (of a
//           kernel defined in the file or imported from its project), a tile run_kernel computes (0: its own; else
//           4..16384), and the configs of an existing `@triton.autotune`.
// Value sets span the legal range (derive_text.h: values_for), the resource limits prune them as constraints.
// The result is also an instrumented copy of the source: every derived value becomes a macro (CUDA: `#ifndef
// P / #define P <default> / #endif`, the site rewritten to use P) or a run_kernel keyword argument (Triton),
// under `@kopt param` / `@kopt constraint` lines, so the ordinary annotation machinery builds its candidates.
// With every default the copy compiles to the same code as the original. Comments and strings are never
// rewritten; a macro defined twice or #undef'd is not derived (the notes say why).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "search/annotations.h"
#include "search/source_scan.h"
#include "util/json_io.h"

namespace kopt::search {

// Where a derived parameter came from.
enum class DeriveSite {
  kNamedConstant,    // constexpr / const integer (namespace or function scope)
  kStaticMember,     // static constexpr member
  kDefine,           // #define NAME <int>
  kTemplateLiteral,  // a literal template argument at a launch site
  kLaunchLiteral,    // a literal block size at a launch site (and the grid that divides by it)
  kLauncherLocal,    // a block size the launcher computes at run time (a local, a dim3 or launch expression)
  kHelperArgument,   // a literal argument at the call of a launcher helper (template or function argument)
  kPragmaUnroll,     // #pragma unroll N
  kLaunchBounds,     // __launch_bounds__(N[, M])
  kTritonConstexpr,  // a literal tl.constexpr keyword argument in run_kernel
  kTritonLaunch,     // num_warps / num_stages in run_kernel
  kTritonAutotune,   // a key of an existing @triton.autotune's configs
};
std::string_view derive_site_name(DeriveSite s);

// What the value does, which decides its value set (derive.cpp: values_for).
enum class ValueRole {
  kBlockThreads,    // threads per block: every power of two in 32..1024 (and the default)
  kTile,            // a tile / size: powers of two from d/8 to 8d (at most 65536), and d; resource constraints prune
  kBlockDim,        // one literal dimension of a dim3 block: powers of two from d/8 to 8d within 1..1024 (and d); the product <= 1024
  kPerThread,       // per-thread work (items per thread, a thread tile, a vector width): 1, 2, 4, 8, 16 (and d)
  kUnroll,          // an unroll factor: 1, 2, 4, 8, 16 (and the default)
  kMinBlocks,       // __launch_bounds__'s second argument: 1, 2, 4 (and the default)
  kMaxThreads,      // __launch_bounds__'s first argument alone: the default up to 1024 (larger is always safe)
  kNumWarps,        // 1, 2, 4, 8, 16, 32 (and the default)
  kNumStages,       // 1..4 (and the default)
  kListed,          // the values an existing @triton.autotune lists
  kLauncherThreads, // a block size the launcher computes at run time: 0 (the launcher's own) and 32..1024 by powers of two
  kGridBlocks,      // the grid of a kernel with a grid-stride loop: powers of two from d/8 to 8d (and d)
  kLauncherTile,    // a Triton tile run_kernel computes (`BLOCK_SIZE = triton.next_power_of_2(n)`, Liger's
                    // `calculate_settings(n)`): 0 (run_kernel's own value) and 4..16384 by powers of two
  kOwnNumWarps,     // num_warps of an imported Triton kernel's launch: 0 (the project's own: its @triton.autotune's choice,
                    // or Triton's default) and 1..32 by powers of two
};
std::string_view value_role_name(ValueRole r);

struct DerivedParam {
  std::string name;     // the @kopt param (a macro for CUDA, a run_kernel keyword for Triton)
  std::string origin;   // the constant / template parameter / keyword in the user's code ("BM", "BLOCK_SIZE")
  ParamKind kind = ParamKind::kDefine;
  DeriveSite site = DeriveSite::kNamedConstant;
  ValueRole role = ValueRole::kTile;
  int64_t default_value = 0;
  std::vector<int64_t> values;  // ascending, holds default_value
  int line = 0;                 // 1-based line of the site in the user's file
  std::string reason;           // one line: "template argument of sgemm<...> at line 212"
  std::vector<std::string> follows;  // the names a launcher-computed block's expression reads (`follows=` of @kopt param)
  std::string covers;                // the run_kernel argument one block of this size covers (`covers=` of @kopt param; Triton)
  std::string when;  // the condition over solve's arguments under which the code it tunes runs (`when=`; a branch's)
};

// A mechanical method variant of plain code, guarded like any method (KOPT_<ID>, off in the baseline).
struct DerivedMethod {
  std::string id;      // a registry method ("launch_bounds")
  std::string reason;  // "__launch_bounds__(BLOCK_SIZE) on block_sum, whose launches all use that block size"
};

struct DerivedConstraint {
  std::string expr;    // over DerivedParam names, in the annotation grammar (search/expr.h)
  std::string reason;  // "static_assert at line 40", "threads per block of the launch at line 90 <= 1024"
};

struct Derivation {
  std::string file;
  SourceLanguage language = SourceLanguage::kCuda;
  std::vector<DerivedParam> params;
  std::vector<DerivedConstraint> constraints;
  std::vector<DerivedMethod> methods;
  std::vector<std::string> notes;  // what was seen and left alone, and why ("line 12: TILE is defined twice ...")
  std::string instrumented;        // the annotated, instrumented copy; empty when nothing was derived
  bool annotated = false;          // the source already had @kopt lines (they stay the authority)
  bool empty() const { return params.empty(); }
};

// Threads per block and static shared memory per block the value sets and constraints respect (sm_90).
inline constexpr int64_t kMaxThreadsPerBlock = 1024;
inline constexpr int64_t kMaxStaticSmemBytes = 48 * 1024;
// Shared memory one block may have with the opt-in (static and dynamic) on H100/H200 (sm_90): 227 KiB.
inline constexpr int64_t kMaxBlockSmemBytes = 227 * 1024;
// Elements of one per-thread (register) array of a kernel, e.g. the accumulators `float acc[TM * TN]`: past 64 a
// thread's tile no longer fits the register file without spilling, and nvcc takes minutes on it (issue 35).
inline constexpr int64_t kMaxPerThreadArrayElems = 64;
// The largest tile value a kTile set reaches (a Triton BLOCK of 65536 elements is already far past any good one).
inline constexpr int64_t kMaxTileValue = 65536;

// A file the kernel includes by a quoted, relative path (`#include "../project/launcher.cu"`), as spelled, with its text.
struct IncludedText {
  std::string spelled;
  std::string text;
};
// The files `text` includes by a quoted path that exists relative to the kernel's folder (one level; at most 4 MiB
// each): where a wrapper's launches are when it calls a project's host launcher (I/O; derive() itself reads nothing).
// A Triton wrapper (.py): the modules it imports from (`from MODULE import kernel`), found beside it, on the sys.path
// entries it adds where they evaluate without running it (literals, __file__, os.path.join/dirname/abspath), or on
// PYTHONPATH, each spelled as the module's name: where the bodies of the kernels it launches are.
std::vector<IncludedText> local_includes(const std::filesystem::path& kernel, std::string_view text);

// `file_name` names the file in reasons and notes and decides the language (".py": Triton). A source that
// already has annotations is derived too, but every derived value whose site a declared param already
// covers is dropped (with a note), and `instrumented` stays empty: the declared space is the authority.
// `included`: the files local_includes() found. CUDA: a file without a launch of its own then names the launches
// they hold in its note (kopt derives from this file only); Triton: a kernel's body read there gives `covers`.
Result<Derivation> derive(std::string_view text, const std::string& file_name, const std::vector<IncludedText>& included = {});

// The @kopt lines of a derivation, each param and constraint under a one-line comment giving its reason,
// then the notes, in the file's comment syntax. What `kopt annotate` prints.
std::string annotation_text(const Derivation& d);

// {"file", "language", "annotated", "params": [{name, origin, kind, site, role, default, values, line, reason}],
//  "constraints": [{expr, reason}], "notes": [...]} (summary.json's "derived" block, `kopt annotate --json`).
util::Json to_json(const Derivation& d);

// Same-length copy of `text` with comments and string/char literal contents blanked to spaces (line breaks
// kept), so positions in it are positions in `text`.
std::string mask_code(std::string_view text, SourceLanguage lang);

}  // namespace kopt::search
