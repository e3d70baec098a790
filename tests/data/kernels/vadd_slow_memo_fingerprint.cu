// Hostile (issue 40): remembers its output by a sampled fingerprint of its inputs (64 elements of a and of b),
// as the memoising SGEMM that kopt reported at 33x the GPU's roof did. A hit copies the remembered output.
// Expected: timed like the honest vadd_slow (every timed call has fresh inputs, so it always computes).
#include <cuda_runtime.h>
#include <cstring>
#include <map>
#include <vector>
__global__ void vadd_slow(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    for (int k = 0; k < 2000; ++k) x = x * 0.999f + b[i] * 0.001f;
    c[i] = a[i] + b[i] + 0.f * x;
  }
}
__global__ void sample(const float* a, const float* b, float* out, int n) {
  int t = threadIdx.x;  // 64 threads: element t * (n / 64) of each input
  long i = static_cast<long>(t) * (n / 64);
  out[t] = a[i];
  out[64 + t] = b[i];
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  static std::map<std::vector<unsigned>, float*> cache;
  static float* dev_fp = nullptr;
  if (!dev_fp) cudaMalloc(&dev_fp, 128 * sizeof(float));
  sample<<<1, 64>>>(a, b, dev_fp, n);
  std::vector<unsigned> key(128);
  cudaMemcpy(key.data(), dev_fp, 128 * sizeof(float), cudaMemcpyDeviceToHost);
  auto it = cache.find(key);
  if (it != cache.end()) {
    cudaMemcpyAsync(c, it->second, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    return;
  }
  vadd_slow<<<(n + 255) / 256, 256>>>(a, b, c, n);
  if (cache.size() < 64) {
    float* keep = nullptr;
    cudaMalloc(&keep, n * sizeof(float));
    cudaMemcpyAsync(keep, c, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    cache[key] = keep;
  }
}
