// Hostile (issue 40): remembers by pointer. The first call with a set of buffers computes; a later call with the
// same buffers returns at once, leaving whatever the outputs hold (right when the inputs did not change).
// Expected: wrong_on_fresh_inputs (an audit puts new inputs in the same buffers).
#include <set>
#include <tuple>
__global__ void vadd_slow(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    for (int k = 0; k < 2000; ++k) x = x * 0.999f + b[i] * 0.001f;
    c[i] = a[i] + b[i] + 0.f * x;
  }
}
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  static std::set<std::tuple<const void*, const void*, void*>> seen;
  if (!seen.insert({a, b, c}).second) return;
  vadd_slow<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
