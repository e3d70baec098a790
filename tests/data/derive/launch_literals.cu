// Literal launches: a templated kernel with literal template arguments whose block size matches the launch's,
// a plain (n + 255) / 256, 256 launch whose kernel has __launch_bounds__(256), and __launch_bounds__(128, 4) on
// a kernel launched with a block size the file cannot see. The block size appears in a string too: "256".
#include <cstdio>
#include <cuda_runtime.h>

template <int BLOCK, int ITEMS, bool kCheck>
__global__ void fill(float* x, int n, float v) {
  long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS + threadIdx.x;
  for (int i = 0; i < ITEMS; ++i) {
    long long j = base + static_cast<long long>(i) * BLOCK;
    if (!kCheck || j < n) x[j] = v;
  }
}

__global__ void __launch_bounds__(256) add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void __launch_bounds__(128, 4) twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

extern "C" void solve(float* x, int n, int threads) {
  const char* msg = "256 threads";
  (void)msg;
  fill<128, 2, true><<<(n + 255) / 256, 128>>>(x, n, 0.5f);
  add_one<<<(n + 255) / 256, 256>>>(x, n);
  twice<<<(n + threads - 1) / threads, threads>>>(x, n);
}
