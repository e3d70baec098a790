// 48 live accumulators: compiled with -maxrregcount=32 it spills to local memory (LDL/STL).
__global__ void register_heavy(const float* __restrict__ in, float* __restrict__ out, int n) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = in[j * n + threadIdx.x];
  for (int it = 0; it < n; ++it) {
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + 7) % 48] + in[it];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j] * (j + 1);
  out[threadIdx.x] = s;
}
