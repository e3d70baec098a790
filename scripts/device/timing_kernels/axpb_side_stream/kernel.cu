// y = 2x + 1 launched on a non-blocking stream, not waited for: the launch escapes the legacy default stream's
// ordering, so neither the events around solve() nor a blocker on the default stream see it. kopt must notice
// (outputs written while the default stream is held, or the host-versus-events probe) and time it with a
// device-wide synchronisation before the stop event.
#include <cuda_runtime.h>

__global__ void axpb(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

extern "C" void solve(const float* x, float* y, int n) {
  static cudaStream_t s = nullptr;
  if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  axpb<<<(n + 255) / 256, 256, 0, s>>>(x, y, n);
}
