#pragma once
// Checks on the GPU (docs/RUNNER.md, "Checks on the GPU"): blocker.cu's kopt_compare and kopt_equal, launched on
// buffers that are already on the GPU. They compute what runner/compare.h computes on the host: an output with no
// mismatch gets its CompareResult here, without a download; one with any mismatch is examined on the host, where
// its first bad element and message come from. Each launch also returns the checksum of the golden buffer it read
// (see DeviceGolden), so a resident buffer that a candidate overwrote is noticed.
#include <cuda.h>

#include <cstdint>
#include <vector>

#include "contract/dtype.h"
#include "device/cuda_driver.h"
#include "runner/compare.h"

namespace kopt::runner {

struct DeviceComparison {
  CompareResult result;       // complete when result.ok; otherwise only the counts (examine on the host)
  uint64_t expected_sum = 0;  // the checksum of `expected` as read
};

struct DeviceEquality {
  int64_t differing = 0;       // elements of `actual` that differ from `reference`
  uint64_t reference_sum = 0;  // the checksum of `reference` as read
};

class DeviceCompare {
 public:
  // Loads the module on the current context; throws Fatal (runner/fatal.h) when it cannot.
  explicit DeviceCompare(const device::DriverApi& api);
  ~DeviceCompare();
  DeviceCompare(const DeviceCompare&) = delete;
  DeviceCompare& operator=(const DeviceCompare&) = delete;

  DeviceComparison compare(contract::DType t, CUdeviceptr expected, CUdeviceptr actual, int64_t numel, Tolerance tol);
  DeviceEquality equal(contract::DType t, CUdeviceptr reference, CUdeviceptr actual, int64_t numel);
  uint64_t checksum(contract::DType t, CUdeviceptr data, int64_t numel) { return equal(t, data, data, numel).reference_sum; }

 private:
  unsigned blocks(int64_t numel) const;
  const device::DriverApi& api_;
  CUmodule module_ = nullptr;
  CUfunction compare_ = nullptr, equal_ = nullptr;
  CUdeviceptr stats_ = 0;  // one KoptCompareStats
  int sms_ = 0;
};

// The element's poison pattern (poison_byte repeated over its bytes), as kopt_compare takes it.
uint64_t poison_pattern(contract::DType t);

}  // namespace kopt::runner
