// Honest: c = a + b, with 2000 dependent FMAs per element that do not change the result (about 0.1 ms at 1M on an
// H200): the yardstick the memoising kernels below are timed against (issue 40).
__global__ void vadd_slow(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    for (int k = 0; k < 2000; ++k) x = x * 0.999f + b[i] * 0.001f;
    c[i] = a[i] + b[i] + 0.f * x;
  }
}
extern "C" void solve(const float* a, const float* b, float* c, int n) { vadd_slow<<<(n + 255) / 256, 256>>>(a, b, c, n); }
