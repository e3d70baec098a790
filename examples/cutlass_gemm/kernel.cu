// BF16 GEMM on Hopper with CUTLASS 3.x: C = A @ B, A (M x K) and B (K x N) bfloat16, row-major; C (M x N)
// float32, row-major; fp32 accumulation. TMA loads, wgmma (HGMMA) tensor cores, warp-specialized
// (producer warp + consumer warp groups), a TMA-store epilogue. Needs sm_90a (kopt builds CUTLASS kernels
// for it) and the CUTLASS headers (CUTLASS_PATH, --cutlass-include DIR, or the nvidia-cutlass wheel).
//
// Constraints CUTLASS checks at run time (can_implement): TMA needs 16-byte aligned rows, so K and N must
// be multiples of 8 (bf16) and N a multiple of 4 (fp32 C). A failed check leaves C unwritten.
//
// @kopt param TILE_M values=64,128,256 default=128
// @kopt param TILE_N values=64,128,256 default=128
// @kopt param TILE_K values=32,64,128 default=64
// @kopt param STAGES values=0,2,3,4,5,6 default=0
// @kopt param CLUSTER_M values=1,2 default=1
// @kopt param CLUSTER_N values=1,2 default=1
// @kopt param PINGPONG values=0,1 default=0
//
// Cooperative (PINGPONG=0): two consumer warp groups split a tile's rows, so a tile has 128 rows or more.
// @kopt constraint PINGPONG == 1 || TILE_M % 128 == 0
// Accumulators in registers: at most 128 fp32 per thread (128 x 256 for two warp groups, 128 x 128 for one).
// @kopt constraint TILE_M * TILE_N <= 16384 * (2 - PINGPONG)
// Shared memory: the mainloop stages (bf16 A and B tiles) within 192 KiB, leaving room for the epilogue's
// buffers under the H100/H200 227 KiB limit. STAGES=0 lets CUTLASS fit as many as the space allows.
// @kopt constraint STAGES * (TILE_M + TILE_N) * TILE_K * 2 <= 196608
// A k-block of 16 bf16 elements per wgmma; a K tile of 32 (64 bytes) is the smallest TMA swizzle.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/kernel_hardware_info.h>

#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef TILE_K
#define TILE_K 64
#endif
#ifndef STAGES
#define STAGES 0
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif

namespace kopt_example {

using namespace cute;

using ElementA = cutlass::bfloat16_t;
using ElementB = cutlass::bfloat16_t;
using ElementD = float;
using ElementAccumulator = float;
using LayoutA = cutlass::layout::RowMajor;  // M x K, K contiguous
using LayoutB = cutlass::layout::RowMajor;  // K x N, N contiguous
using LayoutD = cutlass::layout::RowMajor;  // M x N
constexpr int kAlignA = 128 / cutlass::sizeof_bits<ElementA>::value;  // 16 bytes, what TMA needs
constexpr int kAlignB = 128 / cutlass::sizeof_bits<ElementB>::value;
constexpr int kAlignD = 128 / cutlass::sizeof_bits<ElementD>::value;

using TileShape = Shape<Int<TILE_M>, Int<TILE_N>, Int<TILE_K>>;
using ClusterShape = Shape<Int<CLUSTER_M>, Int<CLUSTER_N>, _1>;

#if PINGPONG
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#endif

// ElementC = void: no source tensor (D = A @ B, beta is never applied), so the epilogue loads nothing.
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
    void, LayoutD, kAlignD, ElementD, LayoutD, kAlignD, EpilogueSchedule>::CollectiveOp;

using StageCount = cute::conditional_t<
    (STAGES > 0), cutlass::gemm::collective::StageCount<(STAGES > 0 ? STAGES : 1)>,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
        sizeof(typename CollectiveEpilogue::SharedStorage))>>;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignA, ElementB, LayoutB, kAlignB,
    ElementAccumulator, TileShape, ClusterShape, StageCount, MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,  // M, N, K, batch
                                                        CollectiveMainloop, CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

using StrideA = typename GemmKernel::StrideA;
using StrideB = typename GemmKernel::StrideB;
using StrideD = typename GemmKernel::StrideD;

// CUTLASS 3 sees every operand as (rows, columns, batch) with B as N x K: a packed row-major M x K A has
// strides (K, 1, M*K); a row-major K x N B, seen as N x K, has (1, N, K*N); a row-major D has (N, 1, M*N).
// The static unit strides are part of the stride types; only the dynamic ones are set here.
StrideA stride_a(int M, int K) {
  StrideA s{};
  cute::get<0>(s) = static_cast<int64_t>(K);
  cute::get<2>(s) = static_cast<int64_t>(M) * K;
  return s;
}
StrideB stride_b(int N, int K) {
  StrideB s{};
  cute::get<1>(s) = static_cast<int64_t>(N);
  cute::get<2>(s) = static_cast<int64_t>(N) * K;
  return s;
}
StrideD stride_d(int M, int N) {
  StrideD s{};
  cute::get<0>(s) = static_cast<int64_t>(N);
  cute::get<2>(s) = static_cast<int64_t>(M) * N;
  return s;
}

// One Gemm object, its workspace and the problem it was initialized for, kept across calls: a timing loop
// calls solve() many times with the same buffers, and re-initializing (TMA descriptors, the smem attribute)
// or re-allocating the workspace each time would be measured as kernel time.
struct State {
  Gemm gemm;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  int sm_count = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  int M = -1, N = -1, K = -1;
};

State& state() {
  static State s;
  return s;
}

bool report(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "cutlass_gemm: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool report(cutlass::Status st, const char* what) {
  if (st == cutlass::Status::kSuccess) return true;
  std::fprintf(stderr, "cutlass_gemm: %s: %s\n", what, cutlass::cutlassGetStatusString(st));
  return false;
}

// Launches D = A @ B on the default stream. On any failure it reports on stderr and launches nothing, so
// C keeps what it held (kopt's poison) and the check fails.
void run(const ElementA* A, const ElementB* B, ElementD* D, int M, int N, int K) {
  State& s = state();
  if (M <= 0 || N <= 0 || K <= 0) {
    std::fprintf(stderr, "cutlass_gemm: M, N, K must be positive (got %d, %d, %d)\n", M, N, K);
    return;
  }
  bool same = s.a == A && s.b == B && s.d == D && s.M == M && s.N == N && s.K == K;
  if (!same) {
    if (s.sm_count == 0) {
      int device = 0;
      if (!report(cudaGetDevice(&device), "cudaGetDevice")) return;
      s.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    }
    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {M, N, K, 1},
                                  {A, stride_a(M, K), B, stride_b(N, K)},
                                  {{1.0f, 0.0f}, nullptr, stride_d(M, N), D, stride_d(M, N)}};
    args.hw_info.sm_count = s.sm_count;
    s.M = -1;  // invalid until initialize succeeds
    if (!report(Gemm::can_implement(args), "can_implement (K and N must be multiples of 8)")) return;
    size_t bytes = Gemm::get_workspace_size(args);
    if (bytes > s.workspace_bytes) {
      if (s.workspace && !report(cudaFree(s.workspace), "cudaFree(workspace)")) return;
      s.workspace = nullptr;
      s.workspace_bytes = 0;
      if (!report(cudaMalloc(&s.workspace, bytes), "cudaMalloc(workspace)")) return;
      s.workspace_bytes = bytes;
    }
    if (!report(s.gemm.initialize(args, s.workspace), "initialize")) return;
    s.a = A;
    s.b = B;
    s.d = D;
    s.M = M;
    s.N = N;
    s.K = K;
  }
  if (!report(s.gemm.run(), "run")) return;
  report(cudaGetLastError(), "launch");
}

}  // namespace kopt_example

extern "C" void solve(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
  kopt_example::run(reinterpret_cast<const cutlass::bfloat16_t*>(A), reinterpret_cast<const cutlass::bfloat16_t*>(B),
                    C, M, N, K);
}
