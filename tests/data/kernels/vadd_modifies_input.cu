// Writes into an input buffer (casting away const).
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { c[i] = a[i] + b[i]; if (i == 7) const_cast<float*>(a)[i] = 0.f; }
}
extern "C" void solve(const float* a, const float* b, float* c, int n) { vadd<<<(n + 255) / 256, 256>>>(a, b, c, n); }
