#include "runner/smem_fill.h"

#include <charconv>

#include "runner/blocker_ptx.h"
#include "runner/fatal.h"

namespace kopt::runner {

std::optional<uint32_t> parse_fill_pattern(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 8) return std::nullopt;
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

SmemFill::SmemFill(const device::DriverApi& api, CUdevice dev) : api_(api) {
  check_cuda(api_, api_.cuDeviceGetAttribute(&bytes_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
             "shared-memory fill: the opt-in shared memory size");
  check_cuda(api_, api_.cuDeviceGetAttribute(&sms_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
             "shared-memory fill: the SM count");
  check_cuda(api_, api_.cuModuleLoadData(&module_, blocker_ptx().data()), "shared-memory fill: cuModuleLoadData");
  check_cuda(api_, api_.cuModuleGetFunction(&fn_, module_, kSmemFillEntry), "shared-memory fill: the fill kernel");
  check_cuda(api_, api_.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes_),
             "shared-memory fill: its dynamic shared memory");
  check_cuda(api_, api_.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
             "shared-memory fill: its carveout");
}

SmemFill::~SmemFill() {
  if (module_) api_.cuModuleUnload(module_);
}

void SmemFill::fill(uint32_t pattern) {
  unsigned int words = static_cast<unsigned int>(bytes_ / 4);
  void* args[] = {&pattern, &words};
  // Two blocks per SM's worth: the block scheduler places one per SM at this size, and a second wave covers an SM
  // the first one skipped.
  check_cuda(api_, api_.cuLaunchKernel(fn_, static_cast<unsigned>(2 * sms_), 1, 1, 1024, 1, 1,
                                       static_cast<unsigned>(bytes_), nullptr, args, nullptr),
             "shared-memory fill: launch");
  check_cuda(api_, api_.cuCtxSynchronize(), "shared-memory fill: synchronize");
}

}  // namespace kopt::runner
