#pragma once
// Shared memory nobody wrote (the sanitizer gate, docs/GATES.md): before each solve() of a check run with
// `--smem-fill PATTERN`, every SM's shared memory is filled with PATTERN by blocker.cu's kopt_smem_fill (one
// block per SM with the whole opt-in dynamic shared memory, the carveout at its maximum), so a kernel that reads
// shared memory it did not write reads PATTERN there, and its outputs show it. compute-sanitizer's initcheck
// tracks global memory only.
#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "device/cuda_driver.h"

namespace kopt::runner {

// "0xffffffff", "ffffffff", "0x7f7f7f7f": a 32-bit word; nullopt when it is not one.
std::optional<uint32_t> parse_fill_pattern(std::string_view text);

class SmemFill {
 public:
  // Loads the module on the current context; throws Fatal (runner/fatal.h) when it cannot.
  SmemFill(const device::DriverApi& api, CUdevice dev);
  ~SmemFill();
  SmemFill(const SmemFill&) = delete;
  SmemFill& operator=(const SmemFill&) = delete;
  // Fills and synchronises.
  void fill(uint32_t pattern);
  int bytes_per_block() const { return bytes_; }

 private:
  const device::DriverApi& api_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  int bytes_ = 0, sms_ = 0;
};

}  // namespace kopt::runner
