// A templated elementwise kernel, out = alpha * x + beta * y, written the plain way: the block size and the
// elements per thread are literal template arguments and a literal block size at the launch. No @kopt lines:
// `kopt annotate` derives them (examples/plain/README.md). Any n >= 1.
#include <cuda_runtime.h>

template <typename T, int BLOCK, int ITEMS>
__global__ void axpby_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, T alpha, T beta,
                             int n) {
  const long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long idx = base + static_cast<long long>(i) * BLOCK;
    if (idx < n) out[idx] = alpha * x[idx] + beta * y[idx];
  }
}

extern "C" void solve(const float* x, const float* y, float* out, int n) {
  int blocks = (n + 256 * 4 - 1) / (256 * 4);
  axpby_kernel<float, 256, 4><<<blocks, 256>>>(x, y, out, 1.5f, -0.5f, n);
}
