#include "runner/clocked_samples.h"

namespace kopt::runner {

void ClockedSamples::add(bool kernel_clock, double span_ms, double event, double busy, double records) {
  if (kernel_clock) {
    gpu_ms.push_back(span_ms);
    busy_ms.push_back(busy);
    kernels.push_back(records);
  } else {
    gpu_ms.push_back(event);
  }
  event_ms.push_back(event);
}

void ClockedSamples::to_events() {
  gpu_ms = event_ms;
  busy_ms.clear();
  kernels.clear();
}

void ClockedSamples::clear() {
  gpu_ms.clear();
  event_ms.clear();
  busy_ms.clear();
  kernels.clear();
}

}  // namespace kopt::runner
