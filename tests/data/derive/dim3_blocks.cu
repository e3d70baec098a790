// dim3 literal blocks: two kernels that read blockDim/threadIdx (each dimension derived, the grid follows per
// axis), a 1-D dim3(256) block, and a tiled transpose that hard-codes its 16x16 tile (left alone with a note).
#include <cuda_runtime.h>

__global__ void scale2d(const float* x, float* y, int w, int h) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c < w && r < h) y[r * w + c] = 2.0f * x[r * w + c];
}

__global__ void add2d(float* y, int w, int h) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c < w && r < h) y[r * w + c] += 1.0f;
}

__global__ void fill1d(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f;
}

__global__ void transpose_tiled(const float* x, float* y, int w, int h) {
  __shared__ float tile[16][17];
  int c = blockIdx.x * 16 + threadIdx.x;
  int r = blockIdx.y * 16 + threadIdx.y;
  if (c < w && r < h) tile[threadIdx.y][threadIdx.x] = x[r * w + c];
  __syncthreads();
  c = blockIdx.y * 16 + threadIdx.x;
  r = blockIdx.x * 16 + threadIdx.y;
  if (c < h && r < w) y[r * h + c] = tile[threadIdx.x][threadIdx.y];
}

extern "C" void solve(const float* x, float* y, float* t, int w, int h) {
  dim3 block(16, 16);
  dim3 grid((w + 15) / 16, (h + 15) / 16);
  scale2d<<<grid, block>>>(x, y, w, h);
  int gx = (w + 31) / 32;
  add2d<<<dim3(gx, (h + 7) / 8), dim3(32, 8)>>>(y, w, h);
  fill1d<<<(w * h + 255) / 256, dim3(256)>>>(t, w * h);
  dim3 tb(16, 16);
  dim3 tg((w + 15) / 16, (h + 15) / 16);
  transpose_tiled<<<tg, tb>>>(y, t, w, h);
}
