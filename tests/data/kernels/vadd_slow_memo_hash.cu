// Hostile (issue 40): remembers its output by a hash of the whole content of its inputs (computed on the GPU), so
// no sampling can miss a change. Expected: timed like the honest vadd_slow (fresh content every timed call).
#include <cuda_runtime.h>
#include <map>
__global__ void vadd_slow(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    for (int k = 0; k < 2000; ++k) x = x * 0.999f + b[i] * 0.001f;
    c[i] = a[i] + b[i] + 0.f * x;
  }
}
__global__ void hash(const unsigned* a, const unsigned* b, int n, unsigned long long* out) {
  unsigned long long h = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    h += (a[i] * 0x9E3779B97F4A7C15ull) ^ (b[i] * 0xC2B2AE3D27D4EB4Full) ^ (static_cast<unsigned long long>(i) << 17);
  atomicAdd(out, h);
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  static std::map<unsigned long long, float*> cache;
  static unsigned long long* dev_h = nullptr;
  if (!dev_h) cudaMalloc(&dev_h, sizeof(unsigned long long));
  cudaMemsetAsync(dev_h, 0, sizeof(unsigned long long), 0);
  hash<<<264, 256>>>(reinterpret_cast<const unsigned*>(a), reinterpret_cast<const unsigned*>(b), n, dev_h);
  unsigned long long key = 0;
  cudaMemcpy(&key, dev_h, sizeof key, cudaMemcpyDeviceToHost);
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
