// kopt corpus wrapper (issue 35): CUTLASS's NCHW -> NHWC layout change (tools/util device_nchw_to_nhwc.h): a
// 32 x 32 tile transpose of each image's (C, H*W) matrix through padded shared memory (33 columns).
// The kernel nchw_to_nhwc_kernel is CUTLASS's (nvidia-cutlass==4.2.0.0, BSD-3-Clause, NVIDIA), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it as CUTLASS's own launcher cutlass::nchw_to_nhwc() does: block dim3(32, 8), grid
// ((H*W + 31)/32, (C + 31)/32, N). The kernel hard-codes the 32-wide tile and the 8 rows of threads.
#include "cutlass/cutlass.h"
#include "../_fetched/nvidia-cutlass-4.2.0.0/tools/util/include/cutlass/util/device_nchw_to_nhwc.h"

extern "C" void solve(const float* input, float* output, int N, int C, int H, int W) {
  dim3 grid((H * W + 31) / 32, (C + 31) / 32, N);
  dim3 block(32, 8);
  cutlass::nchw_to_nhwc_kernel<<<grid, block>>>(output, input, N, H, W, C);
}
