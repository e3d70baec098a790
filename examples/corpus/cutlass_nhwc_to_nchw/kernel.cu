// kopt corpus wrapper (issue 35): CUTLASS's NHWC -> NCHW layout change (tools/util device_nhwc_to_nchw.h): a
// 32 x 32 tile transpose of each image's (H*W, C) matrix through padded shared memory (33 columns).
// The kernel nhwc_to_nchw_kernel is CUTLASS's (nvidia-cutlass==4.2.0.0, BSD-3-Clause, NVIDIA), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it as CUTLASS's own launcher cutlass::nhwc_to_nchw() does: block dim3(32, 8), grid
// ((C + 31)/32, (H*W + 31)/32, N). The kernel hard-codes the 32-wide tile and the 8 rows of threads.
#include "cutlass/cutlass.h"
#include "../_fetched/nvidia-cutlass-4.2.0.0/tools/util/include/cutlass/util/device_nhwc_to_nchw.h"

extern "C" void solve(const float* input, float* output, int N, int C, int H, int W) {
  dim3 grid((C + 31) / 32, (H * W + 31) / 32, N);
  dim3 block(32, 8);
  cutlass::nhwc_to_nchw_kernel<<<grid, block>>>(output, input, N, H, W, C);
}
