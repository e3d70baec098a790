// kopt corpus wrapper (issue 35): FlashInfer's fused residual add + RMSNorm (include/flashinfer/norm.cuh), fp16,
// in place: residual <- input + residual, input <- rmsnorm(input + residual) * weight. One block a row; the
// float sums are staged in dynamic shared memory between the two passes.
// The kernel FusedAddRMSNormKernel is FlashInfer's (flashinfer-python==0.5.3, Apache-2.0), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it as FlashInfer's own launcher flashinfer::norm::FusedAddRMSNorm() does: VEC_SIZE 8 (16-byte vectors
// of halves), min(1024, d / 8) threads as dim3(32, num_warps), one block per row, (round_up(num_warps, 4) + d)
// floats of dynamic shared memory, weight_bias 0, eps 1e-6 (FlashInfer's Python default).
// FlashInfer builds its kernels with -DENABLE_BF16 -DENABLE_FP8 (norm.cuh includes TensorRT-LLM helpers that need them)
#define ENABLE_BF16 1
#define ENABLE_FP8 1
#include <cuda_fp16.h>

#include "../_fetched/flashinfer-python-0.5.3/include/flashinfer/norm.cuh"

extern "C" void solve(__half* input, __half* residual, const __half* weight, int batch_size, int d) {
  constexpr uint32_t vec_size = 8;  // FlashInfer: gcd(16 / sizeof(half), d), 8 for d % 8 == 0
  const uint32_t block_size = std::min<uint32_t>(1024, d / vec_size);
  const uint32_t num_warps = (block_size + 31) / 32;
  dim3 nblks(batch_size);
  dim3 nthrs(32, num_warps);
  const uint32_t smem_size = ((num_warps + 3) / 4 * 4 + d) * sizeof(float);
  if (smem_size > 48 * 1024)
    cudaFuncSetAttribute(flashinfer::norm::FusedAddRMSNormKernel<vec_size, half>,
                         cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size);
  flashinfer::norm::FusedAddRMSNormKernel<vec_size, half><<<nblks, nthrs, smem_size>>>(
      input, residual, const_cast<half*>(weight), d, d, d, 0.f, 1e-6f);
}
