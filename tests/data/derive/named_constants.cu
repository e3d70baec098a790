// Named constants: namespace-scope constexpr, a static constexpr member, a function-scope const; BLOCK is both
// the block size and a loop bound. The names also appear in a comment (BLOCK = 999) and a string.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int BLOCK = 128;

struct Tiling {
  static constexpr int kRows = 4;
};

__global__ void rows_sum(const float* x, float* y, int n) {
  __shared__ float tile[BLOCK];
  float acc = 0.0f;
  for (int r = 0; r < Tiling::kRows; ++r) {
    long long i = (static_cast<long long>(blockIdx.x) * Tiling::kRows + r) * BLOCK + threadIdx.x;
    if (i < n) acc += x[i];
  }
  tile[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int t = 0; t < BLOCK; ++t) s += tile[t];
    y[blockIdx.x] = s;
  }
}

extern "C" void solve(const float* x, float* y, int n) {
  const int kRowsPerBlock = Tiling::kRows;
  const char* banner = "BLOCK = 999";  // BLOCK = 999 in a comment
  (void)banner;
  int blocks = (n + BLOCK * kRowsPerBlock - 1) / (BLOCK * kRowsPerBlock);
  rows_sum<<<blocks, BLOCK>>>(x, y, n);
}
