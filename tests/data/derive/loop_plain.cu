// A kernel without annotations for the optimize loop's test without a GPU (src/loop/derived_test.cpp): kopt
// derives THREADS (the launch's block size) and searches it through a copy; a model of its time stands in for
// the GPU.
#define THREADS 64

__global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * THREADS + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" void solve(const float* x, float* y, int n) { scale<<<(n + THREADS - 1) / THREADS, THREADS>>>(x, y, n); }
