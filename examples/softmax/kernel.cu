// Row softmax: y[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(x[r, :] - max(x[r, :]))), float32, row-major
// (rows x cols). One block per row; warp-shuffle reductions, then one value per warp through shared memory.
//
// online_softmax off: three passes over the row (max, sum of exponentials, write), the safe softmax.
// online_softmax on:  two passes: a running maximum and a running sum rescaled whenever the maximum grows
//                     (Milakov & Gimelshein 2018), then the write pass.
// vectorized_access:  float4 loads and stores when cols is a multiple of 4 (rows then start 16-byte aligned);
//                     other widths fall back to the scalar kernel.
// Any rows >= 1 and cols >= 1 work.
#include <cuda_runtime.h>

#include <math.h>

#include <type_traits>

// @kopt param THREADS values=128,256,512,1024 default=256
// @kopt method online_softmax guard=KOPT_ONLINE_SOFTMAX
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS

#ifndef THREADS
#define THREADS 256
#endif
#ifndef KOPT_ONLINE_SOFTMAX
#define KOPT_ONLINE_SOFTMAX 0
#endif
#ifndef KOPT_VECTORIZED_ACCESS
#define KOPT_VECTORIZED_ACCESS 0
#endif

namespace {

constexpr int kWarps = THREADS / 32;
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS must be a multiple of 32, at most 1024");

#if !KOPT_ONLINE_SOFTMAX
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's maximum or sum, returned to every thread. `scratch` holds one value per warp plus the result.
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  v = kMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < kWarps ? scratch[lane] : (kMax ? -INFINITY : 0.f);
    w = kMax ? warp_max(w) : warp_sum(w);
    if (lane == 0) scratch[kWarps] = w;
  }
  __syncthreads();
  v = scratch[kWarps];
  __syncthreads();  // scratch is reused by the next reduction
  return v;
}
#else
// (m, s): a running maximum and the sum of exp(x - m) over the values seen.
__device__ __forceinline__ void online_add(float& m, float& s, float x) {
  if (x > m) {
    s = s * expf(m - x) + 1.f;  // exp(-inf) = 0 for the first value
    m = x;
  } else {
    s += expf(x - m);
  }
}

__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  float a = m == -INFINITY ? 0.f : s * expf(m - mm);
  float b = m2 == -INFINITY ? 0.f : s2 * expf(m2 - mm);
  m = mm;
  s = a + b;
}

__device__ __forceinline__ void block_online(float& m, float& s, float* scratch) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  if (lane == 0) scratch[2 * warp] = m, scratch[2 * warp + 1] = s;
  __syncthreads();
  if (warp == 0) {
    float wm = lane < kWarps ? scratch[2 * lane] : -INFINITY, ws = lane < kWarps ? scratch[2 * lane + 1] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      online_merge(wm, ws, __shfl_xor_sync(0xffffffffu, wm, o), __shfl_xor_sync(0xffffffffu, ws, o));
    if (lane == 0) scratch[2 * kWarps] = wm, scratch[2 * kWarps + 1] = ws;
  }
  __syncthreads();
  m = scratch[2 * kWarps];
  s = scratch[2 * kWarps + 1];
}
#endif

// kVec: the row is read as float4 (cols % 4 == 0); n counts loads (floats or float4s).
template <bool kVec>
__global__ void __launch_bounds__(THREADS) softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float scratch[2 * kWarps + 2];
  using Load = typename std::conditional<kVec, float4, float>::type;
  const Load* in = reinterpret_cast<const Load*>(x + (size_t)blockIdx.x * cols);
  Load* out = reinterpret_cast<Load*>(y + (size_t)blockIdx.x * cols);
  const int n = kVec ? cols / 4 : cols;

#if KOPT_ONLINE_SOFTMAX
  float m = -INFINITY, s = 0.f;
  for (int i = threadIdx.x; i < n; i += THREADS) {
    Load v = in[i];
    if constexpr (kVec) {
      online_add(m, s, v.x), online_add(m, s, v.y), online_add(m, s, v.z), online_add(m, s, v.w);
    } else {
      online_add(m, s, v);
    }
  }
  block_online(m, s, scratch);
#else
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += THREADS) {
    Load v = in[i];
    if constexpr (kVec) m = fmaxf(fmaxf(m, fmaxf(v.x, v.y)), fmaxf(v.z, v.w));
    else m = fmaxf(m, v);
  }
  m = block_reduce<true>(m, scratch);
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += THREADS) {
    Load v = in[i];
    if constexpr (kVec) s += (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
    else s += expf(v - m);
  }
  s = block_reduce<false>(s, scratch);
#endif

  const float inv = 1.f / s;
  for (int i = threadIdx.x; i < n; i += THREADS) {
    Load v = in[i];
    if constexpr (kVec) out[i] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv, expf(v.w - m) * inv);
    else out[i] = expf(v - m) * inv;
  }
}

}  // namespace

extern "C" void solve(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
#if KOPT_VECTORIZED_ACCESS
  if (cols % 4 == 0) {
    softmax_rows<true><<<rows, THREADS>>>(x, y, cols);
    return;
  }
#endif
  softmax_rows<false><<<rows, THREADS>>>(x, y, cols);
}
