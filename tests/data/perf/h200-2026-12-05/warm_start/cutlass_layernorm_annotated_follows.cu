// kopt: the search space kopt derived from examples/corpus/cutlass_layernorm/kernel.cu (kopt annotate); every default is the original's value.
// derived: template argument T2 = 1 of layernorm_twoPassAlgo_stored_locally_e4<...> at line 16
// @kopt param LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_T2 values=1,2,4,8 default=1
// derived: block block.x = (N / 4 + 31) / 32 * 32 of the launch of layernorm_twoPassAlgo_stored_locally_e4 at line 16, computed by the launcher (0: the launcher's own value; else that many threads)
// @kopt param LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_BLOCK values=0,32,64,128,256,512,1024 default=0 follows=N
#ifndef LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_T2
#define LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_T2 1
#endif
#ifndef LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_BLOCK
#define LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_BLOCK 0
#endif
// kopt corpus wrapper (issue 35): CUTLASS's LayerNorm (tools/util device_layernorm.h), the float path for
// 128 <= N <= 4096, N % 4 == 0: one block a row, a float4 a thread kept in registers, two block reductions
// (mean, variance). The kernel layernorm_twoPassAlgo_stored_locally_e4 is CUTLASS's (nvidia-cutlass==4.2.0.0,
// BSD-3-Clause, NVIDIA), unpacked by scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed);
// only solve() is kopt's. solve() launches it as CUTLASS's own launcher cutlass::layernorm() does on this path:
// template arguments <float4, float, 1> (ITEM_PER_THREAD = 1), N/4 threads rounded up to a multiple of 32 (1024
// at N = 4096), one block per row. out = (x - mean) / sqrt(var + 1e-5) * gamma + beta per row.
// The block size is not free: with ITEM_PER_THREAD = 1 each thread holds exactly one float4 of the row, so the block
// must have at least N/4 threads (a smaller one leaves elements unwritten); ITEM_PER_THREAD * blockDim.x * 4 >= N.
#include "cutlass/cutlass.h"
#include "../_fetched/nvidia-cutlass-4.2.0.0/tools/util/include/cutlass/util/device_layernorm.h"

extern "C" void solve(const float* x, const float* gamma, const float* beta, float* out, int M, int N) {
  dim3 grid(M);
  dim3 block((LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_BLOCK == 0 ? ((N / 4 + 31) / 32 * 32) : LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_BLOCK));
  cutlass::layernorm_twoPassAlgo_stored_locally_e4<float4, float, LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_T2><<<grid, block>>>(
      reinterpret_cast<float4*>(out), reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(gamma),
      reinterpret_cast<const float4*>(beta), M, N);
}
