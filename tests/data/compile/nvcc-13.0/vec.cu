#include <cuda_runtime.h>
__global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
__global__ void copy1(const float* __restrict__ a, float* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
extern "C" void solve(const float* a, float* b, int n) { copy4<<<(n/4+255)/256,256>>>((const float4*)a,(float4*)b,n/4); }
