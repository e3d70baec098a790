#pragma once
// A failure that ends a measuring child (`kopt __runner`): written into its result with its status and reported
// by its exit code. Thrown by the child and by the timing code it uses (runner/timer.h), caught in child_main.
#include <string>

#include "device/cuda_driver.h"
#include "runner/outcome.h"

namespace kopt::runner {

struct Fatal {
  RunStatus status;
  std::string message;
  std::string lib = {};  // the library being called when it happened (paired mode), the result's `failed_lib`
};

// Throws Fatal{kCudaError, "<what>: <CUDA error text>"} unless r is CUDA_SUCCESS.
inline void check_cuda(const device::DriverApi& api, CUresult r, const std::string& what) {
  if (r != CUDA_SUCCESS) throw Fatal{RunStatus::kCudaError, what + ": " + device::error_text(api, r)};
}

}  // namespace kopt::runner
