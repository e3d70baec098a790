// kopt corpus wrapper (issue 35): CUB's device-wide inclusive prefix sum (cub::DeviceScan::InclusiveSum), int32: a
// single-pass decoupled look-back scan. CUB is NVIDIA's (CCCL; CUB 3.0.1 as shipped in the CUDA 13.0 toolkit, the
// nvidia-cuda-cccl==13.0.85 package; its files carry their BSD-3-Clause headers); nothing of it is committed or
// fetched here: nvcc finds it with the toolkit. Only solve() is kopt's. The launch choice is CUB's own: the tuning
// policy it selects for the device's architecture (items per thread, block size, load/store algorithms), chosen
// inside DeviceScan; a user calls it exactly like this, with the temporary storage it asks for (kept across calls).
#include <cstdio>

#include <cub/device/device_scan.cuh>

extern "C" void solve(const int* x, int* y, int n) {
  static void* temp = nullptr;
  static size_t temp_bytes = 0;
  size_t need = 0;
  cub::DeviceScan::InclusiveSum(nullptr, need, x, y, n);
  if (need > temp_bytes) {
    if (temp != nullptr) cudaFree(temp);
    if (cudaMalloc(&temp, need) != cudaSuccess) {
      std::fprintf(stderr, "cub_inclusive_sum: cudaMalloc of %zu bytes failed\n", need);
      temp = nullptr;
      temp_bytes = 0;
      return;
    }
    temp_bytes = need;
  }
  cudaError_t e = cub::DeviceScan::InclusiveSum(temp, temp_bytes, x, y, n);
  if (e != cudaSuccess) std::fprintf(stderr, "cub::DeviceScan::InclusiveSum: %s\n", cudaGetErrorString(e));
}
