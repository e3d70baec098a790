// Hostile (issue 40): solve() returns at once and a detached host thread launches the real work 2 ms later. An
// application calling it would read unwritten outputs. Expected: rejected (outputs_changed_after_return,
// threads_left_running or unwritten_output), never ok.
#include <cuda_runtime.h>
#include <chrono>
#include <thread>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaDeviceSynchronize();
  }).detach();
}
