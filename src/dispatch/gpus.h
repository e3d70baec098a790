#pragma once
// Which GPUs a run measures on (`--gpus`, issue 21): one measuring worker per selected GPU of this host, or per
// slot of a Ray cluster (`--ray ADDRESS`). The default is today's path: one worker on the first visible GPU.
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "device/gpu_info.h"

namespace kopt::dispatch {

struct GpuSelection {
  enum class Kind { kDefault, kAll, kList, kCount };
  Kind kind = Kind::kDefault;
  std::vector<int> list;  // kList: device ordinals as the driver numbers them
  int count = 1;          // kCount (with --ray): this many slots
  std::string text() const;  // as the command line gives it ("all", "0,2", "4"); "" for the default
};

// "all", "0,1,3" (ordinals, no repeats), or with `ray` a count "N" (or "all": what the cluster has). An input error
// naming --gpus and what it takes otherwise.
Result<GpuSelection> parse_gpus(const std::string& text, bool ray);

// One measuring slot: the GPU it measures on, the environment its worker gets (CUDA_VISIBLE_DEVICES=<uuid> when
// it is not simply the first visible GPU; empty on the default path) and its name in the summary.
struct Slot {
  device::GpuInfo gpu;
  std::string visible_devices;  // "" : the worker inherits kopt's environment
  std::string name;             // "GPU 1 (NVIDIA H200)"
};

// The slots of a local selection on the GPUs the driver lists (the hardware gate's). Refused, with what to fix:
// an ordinal not present, GPUs of different models (their timings and ceilings are not comparable; select one
// model with --gpus LIST).
Result<std::vector<Slot>> resolve_gpus(const GpuSelection& sel, const std::vector<device::GpuInfo>& gpus);

}  // namespace kopt::dispatch
