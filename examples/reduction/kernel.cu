// Sum of a float32 vector into one float: out[0] = x[0] + ... + x[n-1], FP32 arithmetic.
//
// A grid of (SMs x BLOCKS_PER_SM) blocks walks the vector with a grid-stride loop; each thread keeps UNROLL
// independent partial sums (loads of consecutive strides in flight at once), adds them, and the block reduces
// its threads' sums with warp shuffles and one value per warp in shared memory. The blocks' sums are combined:
//   atomic_reduction off: each block writes its sum to a device array; a second kernel of one block adds them in
//                         a fixed order. Deterministic: the same input gives the same bits on every run.
//   atomic_reduction on:  out is zeroed and each block atomicAdds its sum. One kernel fewer, but the order of
//                         the additions (and so the last bits of the result) changes from run to run.
// vectorized_access: float4 loads (the vector from cudaMalloc is 16-byte aligned; a tail of n % 4 elements is
//                    read one by one).
// Any n >= 0 works (n = 0 gives 0).
#include <cuda_runtime.h>

// @kopt param THREADS values=128,256,512,1024 default=256
// @kopt param BLOCKS_PER_SM values=1,2,4,8 default=2
// @kopt param UNROLL values=1,2,4 default=1
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS
// @kopt method atomic_reduction guard=KOPT_ATOMIC_REDUCTION

#ifndef THREADS
#define THREADS 256
#endif
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 2
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef KOPT_VECTORIZED_ACCESS
#define KOPT_VECTORIZED_ACCESS 0
#endif
#ifndef KOPT_ATOMIC_REDUCTION
#define KOPT_ATOMIC_REDUCTION 0
#endif

namespace {

constexpr int kWarps = THREADS / 32;
constexpr int kMaxBlocks = 8 * 256;  // BLOCKS_PER_SM x SMs, capped (an H200 has 132 SMs)
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS must be a multiple of 32, at most 1024");

#if !KOPT_ATOMIC_REDUCTION
__device__ float g_block_sums[kMaxBlocks];
#endif

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's sum, valid in thread 0.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.f;
  if (warp == 0) {
    v = lane < kWarps ? warp_sums[lane] : 0.f;
    v = warp_sum(v);
  }
  return v;
}

__global__ void __launch_bounds__(THREADS) sum_blocks(const float* __restrict__ x, long long n, float* __restrict__ out) {
  const long long stride = (long long)gridDim.x * THREADS;
  const long long tid = (long long)blockIdx.x * THREADS + threadIdx.x;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.f;

#if KOPT_VECTORIZED_ACCESS
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const long long n4 = n / 4;
  long long i = tid;
  for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = x4[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n4; i += stride) {
    float4 v = x4[i];
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
  if (tid < n % 4) acc[0] += x[n4 * 4 + tid];
#else
  long long i = tid;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    float v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = x[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] += v[u];
  }
  for (; i < n; i += stride) acc[0] += x[i];
#endif

  float s = 0.f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  s = block_sum(s);
  if (threadIdx.x == 0) {
#if KOPT_ATOMIC_REDUCTION
    atomicAdd(out, s);
#else
    g_block_sums[blockIdx.x] = s;
#endif
  }
}

#if !KOPT_ATOMIC_REDUCTION
// One block adds the blocks' sums, each thread a fixed subset, then the block's tree: a fixed order.
__global__ void __launch_bounds__(THREADS) sum_block_sums(int blocks, float* __restrict__ out) {
  float s = 0.f;
  for (int i = threadIdx.x; i < blocks; i += THREADS) s += g_block_sums[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = s;
}
#endif

}  // namespace

extern "C" void solve(const float* x, float* out, int n) {
  static int sms = 0;  // asked once per process
  if (sms == 0 && cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) sms = 132;
  long long per_thread = 4LL * UNROLL;
  long long wanted = ((long long)n + THREADS * per_thread - 1) / (THREADS * per_thread);
  int blocks = (int)(wanted < 1 ? 1 : wanted);
  if (blocks > sms * BLOCKS_PER_SM) blocks = sms * BLOCKS_PER_SM;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
#if KOPT_ATOMIC_REDUCTION
  cudaMemsetAsync(out, 0, sizeof(float));
  sum_blocks<<<blocks, THREADS>>>(x, n, out);
#else
  sum_blocks<<<blocks, THREADS>>>(x, n, out);
  sum_block_sums<<<1, THREADS>>>(blocks, out);
#endif
}
