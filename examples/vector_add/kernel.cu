// Vector add: c = a + b. Memory-bound (12 bytes moved per FLOP): the negative control, where kopt should
// find little and say it is near the DRAM roofline (the roof of its 2 reads : 1 write mix, docs/ROOFLINE.md).
//
// The baseline is the textbook kernel: one element per thread, 256 threads per block. The space below lets
// kopt try what a kernel engineer would: block size, several elements per thread (more loads in flight), and
// 16-byte accesses (vectorized_access: float4 loads and stores, the scalar tail done by the last threads).
#include <cuda_runtime.h>

// @kopt param BLOCK values=128,256,512,1024 default=256
// @kopt param ITEMS values=1,2,4,8 default=1
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS
// @kopt constraint KOPT_VECTORIZED_ACCESS == 0 || BLOCK * ITEMS <= 2048

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef KOPT_VECTORIZED_ACCESS
#define KOPT_VECTORIZED_ACCESS 0
#endif

// Each block handles BLOCK * ITEMS consecutive words (a float, or a float4 with vectorized_access); a thread's
// ITEMS words are BLOCK apart, so every load instruction of a warp reads one contiguous stretch. All loads of
// a thread are issued before its stores.
template <typename T>
__device__ __forceinline__ T add(T x, T y) { return x + y; }
template <>
__device__ __forceinline__ float4 add<float4>(float4 x, float4 y) {
  return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

template <typename T>
__device__ __forceinline__ void add_words(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                          long long words) {
  const long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS + threadIdx.x;
  T x[ITEMS], y[ITEMS];
#pragma unroll
  for (int u = 0; u < ITEMS; ++u) {
    const long long i = base + static_cast<long long>(u) * BLOCK;
    if (i < words) {
      x[u] = a[i];
      y[u] = b[i];
    }
  }
#pragma unroll
  for (int u = 0; u < ITEMS; ++u) {
    const long long i = base + static_cast<long long>(u) * BLOCK;
    if (i < words) c[i] = add(x[u], y[u]);
  }
}

template <bool kVec>
__global__ void __launch_bounds__(BLOCK) vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                                    float* __restrict__ c, int n) {
  if (kVec) {
    // 16-byte aligned buffers (solve checks): float4 words from element 0, the n % 4 tail done scalar.
    const long long words = n / 4;
    add_words(reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(c),
              words);
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
      const long long i = words * 4 + threadIdx.x;
      c[i] = a[i] + b[i];
    }
  } else {
    add_words(a, b, c, n);
  }
}

extern "C" void solve(const float* a, const float* b, float* c, int n) {
  const bool aligned = ((reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
                         reinterpret_cast<unsigned long long>(c)) & 15) == 0;
  const bool vec = KOPT_VECTORIZED_ACCESS && aligned;  // misaligned buffers take the scalar kernel
  const long long words = vec ? n / 4 : n;
  const long long per_block = static_cast<long long>(BLOCK) * ITEMS;
  long long blocks = (words + per_block - 1) / per_block;
  if (blocks < 1) blocks = 1;  // the tail of n < 4 still needs a block
#if KOPT_VECTORIZED_ACCESS  // the float4 kernel exists only with the method on (so the SASS check can fail)
  if (vec) {
    vector_add<true><<<static_cast<unsigned>(blocks), BLOCK>>>(a, b, c, n);
    return;
  }
#endif
  vector_add<false><<<static_cast<unsigned>(blocks), BLOCK>>>(a, b, c, n);
}
