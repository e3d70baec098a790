#pragma once
// The kernel clock (docs/RUNNER.md, "Timing"): CUPTI's activity records of every kernel, memset and memcpy the
// process issues, with their GPU timestamps, as Nsight Systems shows them. libcupti is loaded at run time
// (dlopen, like libcuda in device/cuda_driver.h): only cupti.h's types are used at compile time, nothing links
// against it, and a machine without it times with the events. What the records mean for one sample is pure
// logic (runner/gpu_clock.h).
//
// Where libcupti is looked for, first found wins: $KOPT_CUPTI_LIB (a file, or a directory holding libcupti.so*
// or, as a site-packages directory, nvidia/cuda_cupti/lib/libcupti.so*); libcupti.so.13 and libcupti.so on the
// loader's path; then $CUDA_HOME, /usr/local/cuda and the toolkit of each nvcc on $PATH, each in lib64, lib and
// extras/CUPTI/lib64.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runner/gpu_clock.h"

namespace kopt::runner {

class KernelClock {
 public:
  // The process's kernel clock: loads libcupti, registers the buffer callbacks and enables the concurrent-kernel,
  // memset and memcpy activity kinds, once per process (after the CUDA context exists: the child creates it
  // before any Timer). Nullptr with the reason in *why_not when KOPT_CUPTI=0 ("disabled"), when libcupti is not
  // found, or when a CUPTI call fails (then every later open fails the same way). One clock at a time: a second
  // open while one is alive fails.
  static std::unique_ptr<KernelClock> open(std::string* why_not);
  static bool disabled_by_env();  // KOPT_CUPTI=0

  ~KernelClock();
  KernelClock(const KernelClock&) = delete;
  KernelClock& operator=(const KernelClock&) = delete;

  // Flushes CUPTI's buffers and forgets every record so far.
  void drain();
  // Flushes CUPTI's buffers (forced: the caller has synchronised, so every record is complete) and returns the
  // records since the last drain or collect.
  std::vector<GpuActivity> collect();
  // Stops recording (disables the activity kinds) until resume(): CUPTI's recording costs each launch host time
  // (about 5 us a call on the H200), which call_ms, the time an application sees, must not carry. False when
  // CUPTI refused; resume() re-enables them and forgets anything recorded meanwhile.
  bool pause();
  bool resume();
  // Records CUPTI dropped (a full buffer) since this clock opened; a sample that lost some has no span anyway
  // when it lost the blocker or the flush, and may be short otherwise: the series reports the count.
  size_t dropped_records() const;
  const std::string& library_path() const;

 private:
  KernelClock() = default;
  size_t dropped_total() const;
  size_t dropped_at_open_ = 0;
};

}  // namespace kopt::runner
