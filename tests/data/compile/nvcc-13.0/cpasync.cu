#include <cuda_pipeline.h>
__global__ void stage_copy(const float4* __restrict__ in, float4* __restrict__ out, int n) {
  __shared__ float4 tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __pipeline_memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n) out[i] = tile[255 - threadIdx.x];
}
