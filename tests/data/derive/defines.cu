// #define cases: one plain block size (THREADS), one redefined (TILE), one #undef'd (DEPTH), one reserved name
// (KOPT_WIDTH), one only in a comment, and an existing macro whose name a derived one would take.
#include <cuda_runtime.h>

#define THREADS 256
#define TILE 16
#define DEPTH 4
#define KOPT_WIDTH 8
// #define COMMENTED 64
#define TWICE_BLOCK 1

__global__ void scale(float* x, int n) {
  __shared__ float buf[THREADS];
  int i = blockIdx.x * THREADS + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = 0; k < TILE; ++k) buf[threadIdx.x] *= 1.0f;
  for (int k = 0; k < DEPTH * KOPT_WIDTH; ++k) buf[threadIdx.x] += 0.0f;
  if (i < n) x[i] = buf[threadIdx.x] * TWICE_BLOCK;
}

#undef TILE
#define TILE 32
#undef DEPTH

__global__ void twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < TILE; ++k)
    if (i < n) x[i] *= 1.0f;
}

extern "C" void solve(float* x, int n) {
  scale<<<(n + THREADS - 1) / THREADS, THREADS>>>(x, n);
  twice<<<(n + 127) / 128, 128>>>(x, n);
}
