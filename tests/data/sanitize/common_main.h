// The standalone driver shared by every main.cu: n from argv[1] (default 1000), x drawn in [-1, 1) from a
// fixed seed, y filled with a sentinel before the call, one call to solve(), every CUDA error checked.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define KOPT_CHECK(call)                                                                   \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));              \
      return 2;                                                                             \
    }                                                                                       \
  } while (0)

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 1;
  std::vector<float> hx(n), hy(n, -7.0f);
  unsigned s = 12345u;
  for (int i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    hx[i] = static_cast<float>(s >> 8) / 8388608.0f - 1.0f;
  }
  float *x = nullptr, *y = nullptr;
  KOPT_CHECK(cudaMalloc(&x, n * sizeof(float)));
  KOPT_CHECK(cudaMalloc(&y, n * sizeof(float)));
  KOPT_CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  KOPT_CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int c = 0; c < calls; ++c) {
    solve(x, y, n);
    KOPT_CHECK(cudaGetLastError());
    KOPT_CHECK(cudaDeviceSynchronize());
  }
  KOPT_CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += hy[i];
  std::printf("n=%d calls=%d checksum=%.6f\n", n, calls, sum);
  KOPT_CHECK(cudaFree(x));
  KOPT_CHECK(cudaFree(y));
  return 0;
}
