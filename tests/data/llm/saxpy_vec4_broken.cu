// A language model's first try at float4 saxpy: a missing semicolon (BROKEN: the fake checker's compile error).
#include <cuda_runtime.h>

#ifndef THREADS
#define THREADS 256
#endif

__global__ void saxpy_kernel(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
#if KOPT_VECTORIZED_ACCESS
  int i4 = blockIdx.x * blockDim.x + threadIdx.x;
  int i = i4 * 4
  if (i + 3 < n) {
    float4 xv = reinterpret_cast<const float4*>(x)[i4];
    float4 yv = reinterpret_cast<float4*>(y)[i4];
    yv.x = a * xv.x + yv.x;
    yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z;
    yv.w = a * xv.w + yv.w;
    reinterpret_cast<float4*>(y)[i4] = yv;
  } else {
    for (; i < n; ++i) y[i] = a * x[i] + y[i];
  }
#else
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
#endif
}

extern "C" void solve(int n,
                      float a,
                      const float *x,   // formatting differs from the baseline; the signature does not
                      float *y) {
#if KOPT_VECTORIZED_ACCESS
  int work = (n + 3) / 4;
#else
  int work = n;
#endif
  saxpy_kernel<<<(work + THREADS - 1) / THREADS, THREADS>>>(n, a, x, y);
}
