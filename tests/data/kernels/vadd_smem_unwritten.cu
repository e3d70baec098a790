// c = a + b through shared memory, plus 0 x a shared slot nobody writes: right while that slot holds a finite
// number (what an earlier kernel left), NaN once the sanitizer gate's fill has put 0xFF bytes there.
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  __shared__ float s[257];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] : 0.0f;
  __syncthreads();
  const float zero = n < 0 ? 1.0f : 0.0f;  // a run-time 0: the product stays
  if (i < n) c[i] = s[threadIdx.x] + b[i] + zero * s[256];
}
extern "C" void solve(const float* a, const float* b, float* c, int n) { vadd<<<(n + 255) / 256, 256>>>(a, b, c, n); }
