#pragma once
// Per-kernel resource usage, parsed from `nvcc -Xptxas -v` output or `cuobjdump --dump-resource-usage`.
// Pure parsers over the tools' own text; a field the tool did not print stays empty.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::compile {

struct KernelResources {
  std::string name;    // mangled, as the tool prints it
  std::string arch;    // "sm_90a"; empty when the tool did not say
  bool entry = true;   // false: a non-inlined __device__ function (ptxas lists its frame only)
  std::optional<int> registers;
  std::optional<int> barriers;
  std::optional<int64_t> shared_bytes;       // static shared memory ("smem" / SHARED)
  std::optional<int64_t> stack_frame_bytes;  // ("stack frame" / STACK)
  std::optional<int64_t> spill_store_bytes;  // ptxas only
  std::optional<int64_t> spill_load_bytes;   // ptxas only
  std::optional<int64_t> local_bytes;        // cuobjdump LOCAL only
  bool spills() const { return spill_store_bytes.value_or(0) > 0 || spill_load_bytes.value_or(0) > 0; }
};

// ptxas -v lines:
//   ptxas info    : Compiling entry function '_Z5heavyPKfPfi' for 'sm_90'
//   ptxas info    : Function properties for _Z5heavyPKfPfi
//       200 bytes stack frame, 360 bytes spill stores, 384 bytes spill loads
//   ptxas info    : Used 32 registers, used 0 barriers, 4096 bytes smem, 200 bytes cumulative stack size
std::vector<KernelResources> parse_ptxas_verbose(std::string_view log);
// cuobjdump --dump-resource-usage:
//   arch = sm_90
//    Function _Z5copy1PKfPfi:
//     REG:10 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:548 TEXTURE:0 SURFACE:0 SAMPLER:0
std::vector<KernelResources> parse_cuobjdump_resource_usage(std::string_view text);

util::Json to_json(const KernelResources& r);
Result<KernelResources> resources_from_json(const util::Json& j);

}  // namespace kopt::compile
