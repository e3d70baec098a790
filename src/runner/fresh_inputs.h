#pragma once
// Evidence that cannot be gamed by remembering (docs/RUNNER.md "Fresh inputs between timed calls", issue 40): every
// timed call sees input content it has not seen before, and some timed calls, at positions the kernel cannot
// predict, are audits on a seed whose inputs this process has not shown it yet, their outputs checked.
//
// Why both: a solve() that keeps its outputs by a fingerprint of its inputs (by pointer, by sampled elements, by a
// full content hash) and copies them when it recognises an input was reported at 33x the GPU's roof. With fresh
// content per sample it must compute every timed call; a solve() that then returns stale or garbage outputs on
// content it does not recognise fails the audit, whose inputs it does not recognise either.
//
// The pure parts are here (which samples are audits, which inputs move, by how much); InputRotation does the
// copies on the GPU.
#include <cstdint>
#include <random>
#include <vector>

#include "contract/dtype.h"
#include "device/cuda_driver.h"

namespace kopt::runner {

// Which inputs get fresh content: floating-point ones. A cyclic shift moves every value without changing any, so
// every value stays one the reference drew; integer and bool inputs (indices, offsets, masks, whose order can
// matter for memory safety) keep the seed's content.
bool rotates(contract::DType d);

// The element offset of one sample's cyclic shift: uniform in [1, numel - 1]; 0 when numel < 2.
uint64_t shift_elements(std::mt19937_64& rng, uint64_t numel);

// Which timed samples are audits: exactly one among the first `window` samples, at a position drawn from the seed,
// then each later sample with probability 1 / `period`. Called once per sample, in order, from index 0.
class AuditSchedule {
 public:
  explicit AuditSchedule(uint64_t seed, int window = kWindow, int period = kPeriod);
  bool audit(int index);
  int audits() const { return audits_; }

  static constexpr int kWindow = 10;  // the series' --min-samples: every series has its first audit
  static constexpr int kPeriod = 32;

 private:
  std::mt19937_64 rng_;
  int first_ = 0;
  int period_ = kPeriod;
  int audits_ = 0;
};

// One input buffer as solve() sees it.
struct RotatedBuffer {
  CUdeviceptr ptr = 0;
  uint64_t bytes = 0;
  uint64_t element_bytes = 1;
  bool rotate = false;  // rotates(dtype)
};

// Keeps a device copy of each buffer's content at construction (the seed's inputs) and, before each timed sample,
// writes every buffer from its copy: a rotated one cyclically shifted by a fresh offset (two device-to-device
// copies), the others as they were. Synchronous (the copies are finished, outside any timed span, when refresh
// returns). Throws Fatal on a CUDA error.
class InputRotation {
 public:
  InputRotation(const device::DriverApi& api, std::vector<RotatedBuffer> buffers, uint64_t seed);
  ~InputRotation();
  InputRotation(const InputRotation&) = delete;
  InputRotation& operator=(const InputRotation&) = delete;

  void refresh();
  int refreshes() const { return refreshes_; }
  bool any_rotated() const;

 private:
  const device::DriverApi& api_;
  std::vector<RotatedBuffer> buffers_;
  std::vector<CUdeviceptr> copies_;
  std::mt19937_64 rng_;
  int refreshes_ = 0;
};

}  // namespace kopt::runner
