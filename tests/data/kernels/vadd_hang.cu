// Never returns: spins on a flag nothing sets.
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  volatile float* v = c;
  while (v[0] != 12345.0f) { }
}
extern "C" void solve(const float* a, const float* b, float* c, int n) { vadd<<<1, 32>>>(a, b, c, n); }
