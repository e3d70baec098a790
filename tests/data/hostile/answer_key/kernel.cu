// Hostile (issue 40 item 4): c = a + b, where CHEAT=1 never computes and answers from the golden files it finds
// (tests/data/kernels/vadd_answer_key.cu: the golden folder on its command line, the working directory, /tmp, kopt's
// cache, every directory an environment variable names). CHEAT=0 computes, slowly, so that the cheat looks
// attractive to a search. Its reference is examples/vector_add/ref.py. `kopt optimize` must never crown CHEAT=1:
// it is right on every public seed and wrong on the sealed one (wrong_on_sealed_seed), whose expected outputs only
// the judge process holds and whose file the measuring process cannot open.
#include <cuda_runtime.h>

// @kopt param CHEAT values=0,1 default=0
#ifndef CHEAT
#define CHEAT 0
#endif

#define solve answer_key_solve  // the included file's solve(), renamed
#include "../../kernels/vadd_answer_key.cu"
#undef solve

__global__ void vadd_slow(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    for (int k = 0; k < 20000; ++k) x = x * 0.999f + b[i] * 0.001f;
    c[i] = a[i] + b[i] + 0.f * x;
  }
}

extern "C" void solve(const float* a, const float* b, float* c, int n) {
  if (CHEAT) answer_key_solve(a, b, c, n);
  else vadd_slow<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
