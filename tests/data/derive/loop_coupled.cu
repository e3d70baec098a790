// A kernel without annotations whose two derived parameters are coupled, for the optimize loop's test without a GPU
// (src/loop/derived_test.cpp, the feasibility model): each block owns a 1024-element segment and covers ITEMS *
// THREADS of it, so ITEMS * THREADS >= 1024 is needed; a smaller product leaves part of each segment unwritten
// (as CUTLASS's layernorm, examples/corpus/cutlass_layernorm). A model of its time stands in for the GPU.
#define ITEMS 1
#define THREADS 1024

__global__ void scale(const float* x, float* y, int n) {
  for (int k = 0; k < ITEMS; ++k) {
    int j = threadIdx.x + k * THREADS;
    if (j < 1024) y[blockIdx.x * 1024 + j] = 2.0f * x[blockIdx.x * 1024 + j];
  }
}

extern "C" void solve(const float* x, float* y, int n) { scale<<<n / 1024, THREADS>>>(x, y, n); }
