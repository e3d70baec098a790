#include "device/gpu_info.h"

#include <unistd.h>

#include <cstdio>

#include "device/cuda_driver.h"

namespace kopt::device {

std::string DriverInfo::driver_version_text() const {
  return std::to_string(driver_version / 1000) + "." + std::to_string((driver_version % 1000) / 10);
}

std::string format_uuid(const unsigned char b[16]) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

Result<DriverInfo> query_gpus(int retries) {
  KOPT_TRY_ASSIGN(const DriverApi* api, load_driver());
  CUresult r = CUDA_SUCCESS;
  for (int attempt = 0; attempt <= retries; ++attempt) {
    r = api->cuInit(0);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NO_DEVICE) break;
    ::usleep(200000u << attempt);  // transient (e.g. driver busy): back off and retry
  }
  if (r == CUDA_ERROR_NO_DEVICE) return gate_error("no GPU: the CUDA driver is installed but sees no device");
  if (r != CUDA_SUCCESS) return gate_error("cuInit failed: " + error_text(*api, r));
  DriverInfo info;
  api->cuDriverGetVersion(&info.driver_version);
  int count = 0;
  api->cuDeviceGetCount(&count);
  if (count == 0) return gate_error("no GPU: the CUDA driver sees no device");
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (api->cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    GpuInfo g;
    g.index = i;
    char name[256] = {};
    api->cuDeviceGetName(name, sizeof name, dev);
    g.name = name;
    CUuuid uuid{};
    if (api->cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS)
      g.uuid = format_uuid(reinterpret_cast<const unsigned char*>(uuid.bytes));
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      api->cuDeviceGetAttribute(&v, a, dev);
      return v;
    };
    g.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    g.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    g.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    g.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    g.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    g.mem_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    g.mem_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    g.smem_per_block_optin_bytes = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    size_t mem = 0;
    api->cuDeviceTotalMem(&mem, dev);
    g.memory_bytes = static_cast<long long>(mem);
    info.gpus.push_back(g);
  }
  return info;
}

util::Json to_json(const GpuInfo& g) {
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", g.uuid},
          {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
          {"arch", g.arch()},
          {"sm_count", g.sm_count},
          {"l2_bytes", g.l2_bytes},
          {"memory_bytes", g.memory_bytes},
          {"sm_clock_max_mhz", g.sm_clock_khz / 1000},
          {"mem_clock_max_mhz", g.mem_clock_khz / 1000},
          {"mem_bus_width_bits", g.mem_bus_width_bits},
          {"smem_per_block_optin_bytes", g.smem_per_block_optin_bytes}};
}

}  // namespace kopt::device
