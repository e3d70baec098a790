#include "runner/fresh_inputs.h"

#include "runner/fatal.h"

namespace kopt::runner {

bool rotates(contract::DType d) { return contract::is_float(d); }

uint64_t shift_elements(std::mt19937_64& rng, uint64_t numel) {
  if (numel < 2) return 0;
  return 1 + rng() % (numel - 1);
}

AuditSchedule::AuditSchedule(uint64_t seed, int window, int period) : rng_(seed), period_(std::max(period, 1)) {
  first_ = static_cast<int>(rng_() % static_cast<uint64_t>(std::max(window, 1)));
}

bool AuditSchedule::audit(int index) {
  bool a = index == first_ || (index > first_ && rng_() % static_cast<uint64_t>(period_) == 0);
  if (a) ++audits_;
  return a;
}

InputRotation::InputRotation(const device::DriverApi& api, std::vector<RotatedBuffer> buffers, uint64_t seed)
    : api_(api), buffers_(std::move(buffers)), rng_(seed) {
  copies_.assign(buffers_.size(), 0);
  try {
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i].bytes == 0) continue;
      check_cuda(api_, api_.cuMemAlloc(&copies_[i], buffers_[i].bytes), "cuMemAlloc (the fresh inputs' source)");
      check_cuda(api_, api_.cuMemcpyDtoD(copies_[i], buffers_[i].ptr, buffers_[i].bytes), "copy an input (fresh inputs)");
    }
  } catch (...) {
    for (auto c : copies_)
      if (c) api_.cuMemFree(c);
    throw;
  }
}

InputRotation::~InputRotation() {
  for (auto c : copies_)
    if (c) api_.cuMemFree(c);
}

bool InputRotation::any_rotated() const {
  for (const auto& b : buffers_)
    if (b.rotate && b.bytes >= 2 * b.element_bytes) return true;
  return false;
}

void InputRotation::refresh() {
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const RotatedBuffer& b = buffers_[i];
    if (b.bytes == 0) continue;
    const uint64_t n = b.bytes / std::max<uint64_t>(b.element_bytes, 1);
    const uint64_t k = b.rotate ? shift_elements(rng_, n) * b.element_bytes : 0;
    // dst[0, bytes - k) = src[k, bytes); dst[bytes - k, bytes) = src[0, k)
    check_cuda(api_, api_.cuMemcpyDtoDAsync(b.ptr, copies_[i] + k, b.bytes - k, nullptr), "fresh inputs (copy)");
    if (k > 0) check_cuda(api_, api_.cuMemcpyDtoDAsync(b.ptr + (b.bytes - k), copies_[i], k, nullptr), "fresh inputs (copy)");
  }
  check_cuda(api_, api_.cuCtxSynchronize(), "fresh inputs (synchronize)");
  ++refreshes_;
}

}  // namespace kopt::runner
