namespace demo {
template <int N>
__global__ void reduce(const float* in, float* out) {
  __shared__ float buf[N];
  buf[threadIdx.x] = in[blockIdx.x * N + threadIdx.x];
  __syncthreads();
  for (int s = N / 2; s > 0; s >>= 1) { if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s]; __syncthreads(); }
  float v = buf[0];
  v += __shfl_down_sync(0xffffffff, v, 1);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
template __global__ void reduce<1024>(const float*, float*);
}
