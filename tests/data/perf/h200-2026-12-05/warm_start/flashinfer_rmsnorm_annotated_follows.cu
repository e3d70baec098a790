// kopt: the search space kopt derived from examples/corpus/flashinfer_rmsnorm/kernel.cu (kopt annotate); every default is the original's value.
// derived: constant vec_size = 8 at line 16: block size (through other locals) of the launch of RMSNormKernel at line 22; also template argument of RMSNormKernel<...> at line 22
// @kopt param vec_size_VALUE values=1,2,4,8,16 default=8
// derived: block_size = std::min<uint32_t>(1024, d / vec_size) at line 17, computed by the launcher: block size (through other locals) of the launch of RMSNormKernel at line 22 (0: the launcher's own value; else that many threads)
// @kopt param block_size_VALUE values=0,32,64,128,256,512,1024 default=0 follows=d,vec_size
#ifndef vec_size_VALUE
#define vec_size_VALUE 8
#endif
#ifndef block_size_VALUE
#define block_size_VALUE 0
#endif
// kopt corpus wrapper (issue 35): FlashInfer's RMSNorm (include/flashinfer/norm.cuh), fp16: one block a row,
// VEC_SIZE halves a thread per step (16-byte vectors), a warp then block reduction of the sum of squares.
// The kernel RMSNormKernel is FlashInfer's (flashinfer-python==0.5.3, Apache-2.0), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it as FlashInfer's own launcher flashinfer::norm::RMSNorm() does: VEC_SIZE = gcd(16 / sizeof(half), d)
// = 8, block_size = min(1024, d / VEC_SIZE) threads as dim3(32, num_warps) (16 warps at d = 4096), one block per
// row, num_warps floats of dynamic shared memory, weight_bias 0, eps 1e-6 (FlashInfer's Python default).
// FlashInfer builds its kernels with -DENABLE_BF16 -DENABLE_FP8 (norm.cuh includes TensorRT-LLM helpers that need them)
#define ENABLE_BF16 1
#define ENABLE_FP8 1
#include <cuda_fp16.h>

#include "../_fetched/flashinfer-python-0.5.3/include/flashinfer/norm.cuh"

extern "C" void solve(const __half* input, const __half* weight, __half* output, int batch_size, int d) {
  constexpr uint32_t vec_size = vec_size_VALUE;  // FlashInfer: gcd(16 / sizeof(half), d), 8 for d % 8 == 0
  const uint32_t block_size = (block_size_VALUE == 0 ? (std::min<uint32_t>(1024, d / vec_size)) : block_size_VALUE);
  const uint32_t num_warps = (block_size + 31) / 32;
  dim3 nblks(batch_size);
  dim3 nthrs(32, num_warps);
  const uint32_t smem_size = num_warps * sizeof(float);
  flashinfer::norm::RMSNormKernel<vec_size, half><<<nblks, nthrs, smem_size>>>(
      const_cast<half*>(input), const_cast<half*>(weight), output, d, d, d, 0.f, 1e-6f);
}
