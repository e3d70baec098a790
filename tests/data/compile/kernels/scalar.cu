// A scalar copy: one 32-bit load and store per thread.
__global__ void copy_scalar(const float* __restrict__ a, float* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}

extern "C" void solve(const float* a, float* b, int n) { copy_scalar<<<(n + 255) / 256, 256>>>(a, b, n); }
