// kopt baseline (5.1828 ms)
// methods: none
#define BK 8
#define BM 64
#define BN 64
#define KOPT_CP_ASYNC_PIPELINE 0
#define KOPT_SMEM_PADDING 0
#define KOPT_VECTORIZED_ACCESS 0
#define STAGES 2
#define TM 4
#define TN 4

// Tunable FP32 SGEMM: C = A @ B, row-major (A is M x K, B is K x N, C is M x N), FP32 accumulation.
//
// Each block computes a BM x BN tile of C; its BM/TM x BN/TN threads each compute a TM x TN sub-tile held in
// registers (register tiling). The K dimension is walked in steps of BK through a ring of STAGES shared-memory
// buffers: A's tile is stored transposed (As[k][m]) so both operands are read from shared memory as float4
// along M and N; a thread's rows and columns are spread in groups of four (row = i4*4*(BM/TM) + ty*4 + i) so
// the float4 reads of a warp are contiguous and conflict-free.
//
// Loading a tile, two ways (method cp_async_pipeline):
//   off: the next tile is loaded into registers while the current one is computed, then stored into the next
//        buffer of the ring (one __syncthreads per tile);
//   on:  cp.async (LDGSTS) copies tiles straight into shared memory, STAGES - 1 tiles ahead, with
//        __pipeline_wait_prior; A's transposed tile is copied element by element (4-byte copies), B's 16 bytes
//        at a time with vectorized_access.
// vectorized_access: float4 global loads (16-byte copies) instead of scalar ones.
// smem_padding: As rows get 4 extra floats, so the transposed stores of a warp spread over the banks.
//
// Requires M % BM == 0, N % BN == 0, K % BK == 0: M, N and K multiples of 128 work for every configuration of
// the space below. Other sizes are refused (C is left unwritten, so kopt reports it).
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

// @kopt param BM values=64,128 default=64
// @kopt param BN values=64,128 default=64
// @kopt param BK values=8,16 default=8
// @kopt param TM values=4,8 default=4
// @kopt param TN values=4,8 default=4
// @kopt param STAGES values=2,3 default=2
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS
// @kopt method cp_async_pipeline guard=KOPT_CP_ASYNC_PIPELINE
// @kopt method smem_padding guard=KOPT_SMEM_PADDING
// @kopt constraint (BM/TM)*(BN/TN) >= 64 && (BM/TM)*(BN/TN) <= 1024
// @kopt constraint (BM/TM)*(BN/TN) % 32 == 0
// @kopt constraint STAGES*BK*(BM+BN+4*KOPT_SMEM_PADDING)*4 <= 49152
// @kopt constraint BM % TM == 0 && BN % TN == 0 && TM % 4 == 0 && TN % 4 == 0

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef KOPT_VECTORIZED_ACCESS
#define KOPT_VECTORIZED_ACCESS 0
#endif
#ifndef KOPT_CP_ASYNC_PIPELINE
#define KOPT_CP_ASYNC_PIPELINE 0
#endif
#ifndef KOPT_SMEM_PADDING
#define KOPT_SMEM_PADDING 0
#endif

namespace {

constexpr int kThreadsM = BM / TM;  // threads along M (ty)
constexpr int kThreadsN = BN / TN;  // threads along N (tx)
constexpr int kThreads = kThreadsM * kThreadsN;
#if KOPT_SMEM_PADDING
constexpr int kPadA = 4;  // keeps As rows 16-byte aligned for the float4 fragment reads
#else
constexpr int kPadA = 0;
#endif
#if KOPT_VECTORIZED_ACCESS
constexpr int kVec = 4;  // floats per global load (or cp.async copy of B)
#else
constexpr int kVec = 1;
#endif
constexpr int kUnitsA = BM * BK / kVec;  // load units per tile
constexpr int kUnitsB = BK * BN / kVec;
constexpr int kLoadsA = (kUnitsA + kThreads - 1) / kThreads;  // per thread
constexpr int kLoadsB = (kUnitsB + kThreads - 1) / kThreads;

static_assert(BM % TM == 0 && BN % TN == 0, "tiles must divide evenly");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read as float4");
static_assert(BK % 4 == 0, "BK must be a multiple of 4");
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per block");
static_assert(STAGES >= 2, "at least two buffers");

struct Smem {
  float a[STAGES][BK][BM + kPadA];  // transposed: a[s][k][m]
  float b[STAGES][BK][BN];
};

#if KOPT_CP_ASYNC_PIPELINE
// Issues the copies of tile k0 into ring buffer s (cp.async, committed by the caller).
__device__ __forceinline__ void copy_tile_async(Smem& sm, int s, const float* A, const float* B, int N, int K, int bm,
                                                int bn, int k0, int tid) {
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    int u = tid + i * kThreads;
    if (kUnitsA % kThreads == 0 || u < kUnitsA) {
      int row = u / (BK / kVec), col = (u % (BK / kVec)) * kVec;
      const float* src = A + (size_t)(bm + row) * K + k0 + col;
#pragma unroll
      for (int j = 0; j < kVec; ++j) __pipeline_memcpy_async(&sm.a[s][col + j][row], src + j, 4);
    }
  }
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) {
    int u = tid + i * kThreads;
    if (kUnitsB % kThreads == 0 || u < kUnitsB) {
      int row = u / (BN / kVec), col = (u % (BN / kVec)) * kVec;
      __pipeline_memcpy_async(&sm.b[s][row][col], B + (size_t)(k0 + row) * N + bn + col, 4 * kVec);
    }
  }
}
#else
// Tile k0 in registers: global loads issued before the math on the current tile, stored after it.
struct Staged {
#if KOPT_VECTORIZED_ACCESS
  float4 a[kLoadsA], b[kLoadsB];
#else
  float a[kLoadsA], b[kLoadsB];
#endif
};

__device__ __forceinline__ void load_tile(Staged& r, const float* A, const float* B, int N, int K, int bm, int bn, int k0,
                                          int tid) {
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    int u = tid + i * kThreads;
    if (kUnitsA % kThreads == 0 || u < kUnitsA) {
      int row = u / (BK / kVec), col = (u % (BK / kVec)) * kVec;
      const float* src = A + (size_t)(bm + row) * K + k0 + col;
#if KOPT_VECTORIZED_ACCESS
      r.a[i] = *reinterpret_cast<const float4*>(src);
#else
      r.a[i] = *src;
#endif
    }
  }
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) {
    int u = tid + i * kThreads;
    if (kUnitsB % kThreads == 0 || u < kUnitsB) {
      int row = u / (BN / kVec), col = (u % (BN / kVec)) * kVec;
      const float* src = B + (size_t)(k0 + row) * N + bn + col;
#if KOPT_VECTORIZED_ACCESS
      r.b[i] = *reinterpret_cast<const float4*>(src);
#else
      r.b[i] = *src;
#endif
    }
  }
}

__device__ __forceinline__ void store_tile(Smem& sm, int s, const Staged& r, int tid) {
#pragma unroll
  for (int i = 0; i < kLoadsA; ++i) {
    int u = tid + i * kThreads;
    if (kUnitsA % kThreads == 0 || u < kUnitsA) {
      int row = u / (BK / kVec), col = (u % (BK / kVec)) * kVec;
#if KOPT_VECTORIZED_ACCESS
      sm.a[s][col + 0][row] = r.a[i].x;
      sm.a[s][col + 1][row] = r.a[i].y;
      sm.a[s][col + 2][row] = r.a[i].z;
      sm.a[s][col + 3][row] = r.a[i].w;
#else
      sm.a[s][col][row] = r.a[i];
#endif
    }
  }
#pragma unroll
  for (int i = 0; i < kLoadsB; ++i) {
    int u = tid + i * kThreads;
    if (kUnitsB % kThreads == 0 || u < kUnitsB) {
      int row = u / (BN / kVec), col = (u % (BN / kVec)) * kVec;
#if KOPT_VECTORIZED_ACCESS
      *reinterpret_cast<float4*>(&sm.b[s][row][col]) = r.b[i];
#else
      sm.b[s][row][col] = r.b[i];
#endif
    }
  }
}
#endif

// acc += the BK-deep product of ring buffer s.
__device__ __forceinline__ void compute_tile(const Smem& sm, int s, float (&acc)[TM][TN], int tx, int ty) {
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    float a[TM], b[TN];
#pragma unroll
    for (int i4 = 0; i4 < TM / 4; ++i4) {
      float4 v = *reinterpret_cast<const float4*>(&sm.a[s][k][i4 * 4 * kThreadsM + ty * 4]);
      a[i4 * 4 + 0] = v.x, a[i4 * 4 + 1] = v.y, a[i4 * 4 + 2] = v.z, a[i4 * 4 + 3] = v.w;
    }
#pragma unroll
    for (int j4 = 0; j4 < TN / 4; ++j4) {
      float4 v = *reinterpret_cast<const float4*>(&sm.b[s][k][j4 * 4 * kThreadsN + tx * 4]);
      b[j4 * 4 + 0] = v.x, b[j4 * 4 + 1] = v.y, b[j4 * 4 + 2] = v.z, b[j4 * 4 + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

}  // namespace

__global__ void __launch_bounds__(kThreads) sgemm_tunable(const float* __restrict__ A, const float* __restrict__ B,
                                                          float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) Smem sm;
  const int tid = threadIdx.x;
  const int tx = tid % kThreadsN, ty = tid / kThreadsN;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int tiles = K / BK;
  float acc[TM][TN] = {};

#if KOPT_CP_ASYNC_PIPELINE
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) copy_tile_async(sm, s, A, B, N, K, bm, bn, s * BK, tid);
    __pipeline_commit();  // one group per tile, empty past the end, so the counting below stays uniform
  }
  for (int t = 0; t < tiles; ++t) {
    __pipeline_wait_prior(STAGES - 2);  // this thread's copies of tile t have landed
    __syncthreads();                    // everyone's have, and everyone is done with tile t - 1's buffer
    int next = t + STAGES - 1;
    if (next < tiles) copy_tile_async(sm, next % STAGES, A, B, N, K, bm, bn, next * BK, tid);
    __pipeline_commit();
    compute_tile(sm, t % STAGES, acc, tx, ty);
  }
#else
  Staged r;
  load_tile(r, A, B, N, K, bm, bn, 0, tid);
  store_tile(sm, 0, r, tid);
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) load_tile(r, A, B, N, K, bm, bn, (t + 1) * BK, tid);
    compute_tile(sm, t % STAGES, acc, tx, ty);
    if (t + 1 < tiles) store_tile(sm, (t + 1) % STAGES, r, tid);  // a buffer nobody reads now (STAGES >= 2)
    __syncthreads();
  }
#endif

#pragma unroll
  for (int i4 = 0; i4 < TM / 4; ++i4)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int row = bm + i4 * 4 * kThreadsM + ty * 4 + i;
#pragma unroll
      for (int j4 = 0; j4 < TN / 4; ++j4) {
        int col = bn + j4 * 4 * kThreadsN + tx * 4;
        const float* v = &acc[i4 * 4 + i][j4 * 4];
        *reinterpret_cast<float4*>(&C[(size_t)row * N + col]) = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0 || K <= 0 || M % BM != 0 || N % BN != 0 || K % BK != 0) return;  // see the header
  dim3 grid(N / BN, M / BM);
  sgemm_tunable<<<grid, kThreads>>>(A, B, C, M, N, K);
}
