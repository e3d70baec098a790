// Launches on a non-blocking stream and returns without waiting: the runner must still time the work.
#include <cuda_runtime.h>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float x = a[i]; for (int k = 0; k < 2000; ++k) x = x * 0.999f + b[i] * 0.001f; c[i] = a[i] + b[i] + 0.f * x; }
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  static cudaStream_t s = nullptr;
  if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  vadd<<<(n + 255) / 256, 256, 0, s>>>(a, b, c, n);
}
