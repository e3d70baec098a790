// One row per block: y[row] = max over x[row, :]. A stand-in for a Triton cubin (one extern "C" kernel).
extern "C" __global__ void softmax_kernel(const float* x, float* y, int n_cols) {
  __shared__ float best[256];
  const float* row = x + static_cast<long long>(blockIdx.x) * n_cols;
  float m = -3.4e38f;
  for (int c = threadIdx.x; c < n_cols; c += blockDim.x) m = fmaxf(m, row[c]);
  best[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) best[threadIdx.x] = fmaxf(best[threadIdx.x], best[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = best[0];
}
