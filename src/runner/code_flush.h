#pragma once
// The instruction-cache flush of a cold sample (KOPT_CODE_FLUSH=1; docs/RUNNER.md "The L2 flush"): a kernel whose
// straight-line code is larger than an SM's instruction caches, run on every SM after the L2 flush, so the timed
// kernel fetches its own code again as it would after Nsight Compute's `--cache-control all` or in an application
// where other kernels ran in between. Without it kopt's samples follow one another with the timed kernel's code
// still in the SMs' instruction caches (the flush's memset and read pass are a few instructions).
#include <string>

namespace kopt::runner {

inline constexpr const char* kCodeFlushEntry = "kopt_code_flush";
inline constexpr int kCodeFlushSteps = 6000;  // about 36,000 SASS instructions (~570 KB): 4x an SM's 128 KB L1.5 cache

// The PTX (sm_90, NUL-free text) of kopt_code_flush(unsigned* sink, unsigned seed): `steps` xorshift steps with
// their shift counts varying by step (no two steps alike, so nothing folds or re-rolls them), the result written
// to *sink only when it equals a value the compiler cannot see.
std::string code_flush_ptx(int steps = kCodeFlushSteps);

}  // namespace kopt::runner
