// kopt: the search space kopt derived from examples/corpus/flashinfer_silu_and_mul/kernel.cu (kopt annotate); every default is the original's value.
// derived: block block.x = std::min<uint32_t>(d / vec_size, 1024U) of the launch of act_and_mul_kernel at line 19, computed by the launcher (0: the launcher's own value; else that many threads)
// @kopt param ACT_AND_MUL_KERNEL_BLOCK values=0,32,64,128,256,512,1024 default=0 follows=d,vec_size
#ifndef ACT_AND_MUL_KERNEL_BLOCK
#define ACT_AND_MUL_KERNEL_BLOCK 0
#endif
// kopt corpus wrapper (issue 35): FlashInfer's gated activation (include/flashinfer/activation.cuh), fp16:
// out[t, :] = act(x[t, :d]) * x[t, d:] with act = silu, one block a token, 16-byte vectors, a block-stride loop.
// The kernel act_and_mul_kernel is FlashInfer's (flashinfer-python==0.5.3, Apache-2.0), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() and the activation
// function below (kopt's, as FlashInfer's JIT passes its own) are kopt's. solve() launches it as FlashInfer's
// launcher does (jit/activation.py): grid = num_tokens, block = min(d / vec_size, 1024) with vec_size =
// 16 / sizeof(half) = 8 (1024 at d = 14336).
#include <cuda_fp16.h>

#include "../_fetched/flashinfer-python-0.5.3/include/flashinfer/activation.cuh"

// silu(x) = x / (1 + exp(-x))
__device__ __forceinline__ float silu(const float& x) { return x / (1.0f + __expf(-x)); }

extern "C" void solve(const __half* input, __half* out, int num_tokens, int d) {
  const uint32_t vec_size = 16 / sizeof(half);
  dim3 grid(num_tokens);
  dim3 block((ACT_AND_MUL_KERNEL_BLOCK == 0 ? (std::min<uint32_t>(d / vec_size, 1024U)) : ACT_AND_MUL_KERNEL_BLOCK));
  flashinfer::activation::act_and_mul_kernel<half, silu><<<grid, block>>>(out, input, d);
}
