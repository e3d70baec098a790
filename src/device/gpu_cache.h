#pragma once
// The GPU enumeration kept between commands (issue 36 item 3): query_gpus() loads the CUDA driver and calls cuInit,
// 0.1 s of every `kopt bench`. The answer is kept in kopt's cache folder (gpus.json), keyed by what would change it
// without a reboot being needed to notice: the driver's version text (/proc/driver/nvidia/version), this boot's id,
// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER. KOPT_GPU_CACHE=off asks the driver every time.
#include <filesystem>
#include <string>

#include "device/gpu_info.h"

namespace kopt::device {

// The key of the current system, or "" when it cannot be read (no NVIDIA driver loaded: nothing is cached).
std::string gpu_cache_key();

// query_gpus() through the cache file `file` (default: kopt_cache_dir("gpus.json")); `key` as gpu_cache_key().
// *cached says whether the answer came from the file. Failures are never cached.
Result<DriverInfo> query_gpus_cached(bool* cached = nullptr, std::filesystem::path file = {}, std::string key = "\x01");

util::Json to_cache_json(const DriverInfo& d);
Result<DriverInfo> from_cache_json(const util::Json& j);

}  // namespace kopt::device
