__device__ __noinline__ float helper(float x, float* scratch) { scratch[threadIdx.x & 7] = x; return x * scratch[(threadIdx.x + 1) & 7]; }
__constant__ float coeffs[64];
__global__ void __launch_bounds__(128) uses_helper(float* out) { float s[8]; out[threadIdx.x] = helper(out[threadIdx.x] * coeffs[threadIdx.x & 63], s); }
