// kopt corpus wrapper (issue 35): CUTLASS's RMSNorm (tools/util device_rmsnorm.h), the fp16 path: one block a row,
// 8 halves (a float4) a thread per step, a block reduction of the sum of squares, two passes over the row.
// The kernel rmsnorm_twoPassAlgo_e8 is CUTLASS's (nvidia-cutlass==4.2.0.0, BSD-3-Clause, NVIDIA), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it with the block size CUTLASS's own launcher cutlass::rmsnorm() computes for this path:
// min(1024, N/8 rounded up to a multiple of 32) threads (512 at N = 4096), grid = one block per row.
// y = x / sqrt(mean(x^2) + eps) * w over each row of the M x N fp16 matrix x; eps = 1e-5; N % 8 == 0.
#include <cuda_fp16.h>

#include "cutlass/cutlass.h"
#include "../_fetched/nvidia-cutlass-4.2.0.0/tools/util/include/cutlass/util/device_rmsnorm.h"

extern "C" void solve(const __half* x, const __half* w, __half* y, int M, int N) {
  const int block_size = std::min(1024, (N / 8 + 31) / 32 * 32);
  cutlass::rmsnorm_twoPassAlgo_e8<<<M, block_size>>>(reinterpret_cast<float4*>(y), reinterpret_cast<const float4*>(x),
                                                     reinterpret_cast<const float4*>(w), M, N, 1e-5f);
}
