// kopt corpus wrapper (issue 35): FlashInfer's attention-state merge (include/flashinfer/attention/cascade.cuh),
// the step of cascade / split-KV attention that combines two partial attention outputs by their log-sum-exps:
// per (position, head), v = (2^(s_a - m) v_a + 2^(s_b - m) v_b) / (2^(s_a - m) + 2^(s_b - m)), s = log2(...) + m.
// The kernel MergeStateKernel is FlashInfer's (flashinfer-python==0.5.3, Apache-2.0), unpacked by
// scripts/corpus/fetch.py into examples/corpus/_fetched/ (never committed); only solve() is kopt's. solve()
// launches it as FlashInfer's own launcher flashinfer::MergeState() does: vec_size = max(16 / sizeof(half),
// head_dim / 32) = 8 for head_dim <= 256, a block of dim3(head_dim / vec_size, num_heads) (one thread row per
// head), one block per position. fp16 values, float LSEs (base 2).
#define ENABLE_BF16 1
#define ENABLE_FP8 1
#include <cuda_fp16.h>

#include "../_fetched/flashinfer-python-0.5.3/include/flashinfer/attention/cascade.cuh"

extern "C" void solve(const __half* v_a, const float* s_a, const __half* v_b, const float* s_b, __half* v_merged,
                      float* s_merged, int seq_len, int num_heads, int head_dim) {
  constexpr uint32_t vec_size = 8;
  dim3 nblks(seq_len);
  dim3 nthrs(head_dim / vec_size, num_heads);
  flashinfer::MergeStateKernel<vec_size, half, half><<<nblks, nthrs>>>(
      const_cast<half*>(v_a), const_cast<float*>(s_a), const_cast<half*>(v_b), const_cast<float*>(s_b), v_merged,
      s_merged, num_heads, head_dim);
}
