// c = a + b in two launches (c = a, then c += b): the kernel clock's span must cover both kernels.
__global__ void copy_a(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i];
}
__global__ void add_b(const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] += b[i];
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  copy_a<<<(n + 255) / 256, 256>>>(a, c, n);
  add_b<<<(n + 255) / 256, 256>>>(b, c, n);
}
