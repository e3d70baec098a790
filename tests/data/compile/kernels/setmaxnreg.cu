// setmaxnreg exists only on sm_90a: this builds with -gencode=arch=compute_90a,code=sm_90a and fails with
// -arch=sm_90a on nvcc 13.0.
__global__ void producer(float* out) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
  out[threadIdx.x] = threadIdx.x;
}
