// Stages a tile in shared memory with cp.async (LDGSTS on sm_80+).
#include <cuda_pipeline.h>

__global__ void staged_copy(const float4* __restrict__ in, float4* __restrict__ out, int n4) {
  __shared__ float4 tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) __pipeline_memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n4) out[i] = tile[threadIdx.x];
}
