// y = 2x + 1, then cudaDeviceSynchronize() inside solve(): behind kopt's blocker this would wait forever (the
// blocker waits for the host, the host for the device). kopt's watchdog releases it, discards that sample and
// times with events around the host-launched call (timing_method events_default_stream, fallback
// solve_waited_on_gpu).
#include <cuda_runtime.h>

__global__ void axpb(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

extern "C" void solve(const float* x, float* y, int n) {
  axpb<<<(n + 255) / 256, 256>>>(x, y, n);
  cudaDeviceSynchronize();
}
