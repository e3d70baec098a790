// Hostile (issue 40; llm.c issue 851's pattern): pins its inputs in the L2's persisting carve-out, so a "cold"
// sample would find them there. Expected: correct, flagged (device_state.changed_by_candidate), and timed like
// vadd_ok: kopt resets the persisting lines and the limit before every sample.
#include <cuda_runtime.h>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  int dev = 0, max_persist = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, max_persist);
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = const_cast<float*>(a);
  attr.accessPolicyWindow.num_bytes = static_cast<size_t>(n) * sizeof(float);
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(cudaStreamLegacy, cudaStreamAttributeAccessPolicyWindow, &attr);
  vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
