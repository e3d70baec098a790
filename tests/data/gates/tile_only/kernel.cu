// A kernel correct only at multiples of its tile (issue 18's held-out shapes, scripts/device/gates_check.sh):
// y = 2 x. The baseline (ITEMS=1) is a grid-stride loop over a fixed grid of 16 blocks: correct at every n, and
// slow (16 of the GPU's SMs). With ITEMS=8 each thread moves two float4 words with no bounds check, over
// n / (BLOCK * ITEMS) blocks: much faster, and the tail past the last full tile is never written, so it is wrong
// whenever n is not a multiple of BLOCK * 8. The workload matrix keeps the user's alignment (a multiple of 256 at
// n = 2^24), so every search case is a multiple of the tile and the search picks it; the held-out shapes (a tile
// plus one, primes, n = 1) are where it fails.
#include <cuda_runtime.h>

// @kopt param BLOCK values=128,256 default=256
// @kopt param ITEMS values=1,8 default=1

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

__global__ void twice_strided(const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = 2.0f * x[i];
}

// Full tiles only: thread t of block b moves float4 words b * BLOCK * 2 + t and that + BLOCK.
__global__ void twice_tiles(const float4* __restrict__ x, float4* __restrict__ y) {
  const long long w = static_cast<long long>(blockIdx.x) * BLOCK * 2 + threadIdx.x;
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    float4 v = x[w + u * BLOCK];
    y[w + u * BLOCK] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
  }
}

extern "C" void solve(const float* x, float* y, int n) {
#if ITEMS == 1
  twice_strided<<<16, BLOCK>>>(x, y, n);
#else
  const int blocks = n / (BLOCK * ITEMS);
  if (blocks > 0) twice_tiles<<<blocks, BLOCK>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y));
#endif
}
