// kopt corpus wrapper (issue 35): FlashInfer's online softmax over vocabulary logits (include/flashinfer/
// sampling.cuh), float32: one block a row, an online max/sum pass then a normalising pass, 1024 threads.
// The kernel OnlineSoftmaxFusedKernel is FlashInfer's (flashinfer-python==0.5.3, Apache-2.0), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it as FlashInfer's own launcher flashinfer::sampling::OnlineSoftmax() does on its single-block path
// (batch_size > 128 or d < 24576) on sm_80 and later: BLOCK_THREADS = 1024, VEC_SIZE = gcd(16 / sizeof(float), d)
// = 4, CACHE_INPUT = false (batch_size > 32), no temperature array, temperature 1, one block per row, dynamic
// shared memory of sizeof(OnlineSoftmaxTempStorage<1024>). d must be a multiple of 4.
#define ENABLE_BF16 1
#define ENABLE_FP8 1
#include "../_fetched/flashinfer-python-0.5.3/include/flashinfer/sampling.cuh"

extern "C" void solve(const float* logits, float* probs, int batch_size, int d) {
  using namespace flashinfer::sampling;
  constexpr uint32_t BLOCK_THREADS = 1024;  // DISPATCH_COMPUTE_CAP_NUM_THREADS on sm_80 and later
  const uint32_t smem_size = sizeof(OnlineSoftmaxTempStorage<BLOCK_THREADS>);
  auto kernel = OnlineSoftmaxFusedKernel<BLOCK_THREADS, 4, float, false>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size);
  kernel<<<batch_size, BLOCK_THREADS, smem_size>>>(const_cast<float*>(logits), probs, nullptr, 1.0f, d);
}
