// A vectorized copy: one float4 (128-bit) load and store per thread.
__global__ void copy_vec4(const float4* __restrict__ a, float4* __restrict__ b, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) b[i] = a[i];
}

extern "C" void solve(const float* a, float* b, int n) {
  copy_vec4<<<(n / 4 + 255) / 256, 256>>>(reinterpret_cast<const float4*>(a), reinterpret_cast<float4*>(b), n / 4);
}
