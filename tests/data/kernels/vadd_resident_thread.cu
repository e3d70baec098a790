// Hostile (issue 40): one host thread, started by the first call and kept for the process's life, does every call's
// work 2 ms after solve() returned. Expected: threads_left_running (the thread a call left is still alive).
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <thread>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
namespace {
struct Job { const float* a; const float* b; float* c; int n; };
std::atomic<Job*> pending{nullptr};
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  static bool started = false;
  if (!started) {
    started = true;
    std::thread([] {
      while (true) {
        Job* j = pending.exchange(nullptr);
        if (!j) { std::this_thread::sleep_for(std::chrono::microseconds(200)); continue; }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        vadd<<<(j->n + 255) / 256, 256>>>(j->a, j->b, j->c, j->n);
        cudaDeviceSynchronize();
        delete j;
      }
    }).detach();
  }
  pending.store(new Job{a, b, c, n});
}
