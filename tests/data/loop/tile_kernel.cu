// A kernel for the optimize loop's test without a GPU (src/loop/optimize_loop_test.cpp): only its annotations
// and its solve() declaration matter there; a model of its time stands in for the GPU.
// @kopt param TILE values=16,32,64,128 default=16
// @kopt param UNROLL values=1,2,4 default=1
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS
// @kopt constraint TILE * UNROLL <= 256
#ifndef TILE
#define TILE 16
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef KOPT_VECTORIZED_ACCESS
#define KOPT_VECTORIZED_ACCESS 0
#endif

__global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if KOPT_VECTORIZED_ACCESS
  if (i < n) y[i] = 2.0f * __ldg(x + i);
#else
  if (i < n) y[i] = 2.0f * x[i];
#endif
}

extern "C" void solve(const float* x, float* y, int n) { scale<<<(n + TILE * UNROLL - 1) / (TILE * UNROLL), TILE * UNROLL>>>(x, y, n); }
