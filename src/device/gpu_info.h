#pragma once
#include <string>
#include <vector>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::device {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-..."
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long long l2_bytes = 0;
  long long memory_bytes = 0;
  int sm_clock_khz = 0, mem_clock_khz = 0, mem_bus_width_bits = 0;
  long long smem_per_block_optin_bytes = 0;
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

struct DriverInfo {
  int driver_version = 0;  // e.g. 13000
  std::string driver_version_text() const;  // "13.0"
  std::vector<GpuInfo> gpus;
};

// Enumerates GPUs through the driver API; retries transient cuInit failures. Error (exit 3) with no GPU.
Result<DriverInfo> query_gpus(int retries = 3);

util::Json to_json(const GpuInfo& g);
std::string format_uuid(const unsigned char bytes[16]);

}  // namespace kopt::device
