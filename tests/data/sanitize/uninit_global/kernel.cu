// Uninitialised global memory: solve() keeps a workspace from cudaMalloc between calls and accumulates into it
// without ever zeroing it (ws[i] += x[i]), then copies it to y. initcheck reports the first read of the
// workspace; from the second call on the results are wrong (they carry the previous call's values).
#include <cuda_runtime.h>

#define TILE 256

static float* g_workspace = nullptr;
static int g_capacity = 0;

__global__ void accumulate(const float* __restrict__ x, float* __restrict__ ws, int n) {
  const int i = blockIdx.x * TILE + threadIdx.x;
  if (i < n) ws[i] += x[i];  // reads ws before anything wrote it
}

__global__ void copy_out(const float* __restrict__ ws, float* __restrict__ y, int n) {
  const int i = blockIdx.x * TILE + threadIdx.x;
  if (i < n) y[i] = ws[i];
}

extern "C" void solve(const float* x, float* y, int n) {
  if (g_capacity < n) {
    if (g_workspace) cudaFree(g_workspace);
    if (cudaMalloc(&g_workspace, static_cast<size_t>(n) * sizeof(float)) != cudaSuccess) return;
    g_capacity = n;  // missing: cudaMemset(g_workspace, 0, ...) before each call
  }
  const int blocks = (n + TILE - 1) / TILE;
  accumulate<<<blocks, TILE>>>(x, g_workspace, n);
  copy_out<<<blocks, TILE>>>(g_workspace, y, n);
}
