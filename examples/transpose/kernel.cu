// Out-of-place transpose: y[c][r] = x[r][c], x is rows x cols and y is cols x rows, float32, row-major.
//
// Each block moves a TILE x TILE tile through shared memory, so that both the reads of x (along its rows) and
// the writes of y (along its rows, x's columns) are coalesced; the block's TILE x BLOCK_ROWS threads walk the
// tile in TILE / BLOCK_ROWS steps. Reading the tile back by columns puts a warp's 32 accesses 32 (or 64) floats
// apart: all in one bank, a 32-way conflict.
// smem_padding: one extra float per tile row moves each row to the next bank, removing the conflict.
// vectorized_access: each thread loads 4 consecutive floats of x with one 16-byte load (LDG.E.128).
// vectorized_stores: each thread writes 4 consecutive floats of y with one 16-byte store (STG.E.128), gathered
//   from 4 tile rows.
// grouped_launch_ordering: blocks take their tiles in diagonal order (block b of the launch takes tile row
//   b % tiles_down and tile column (b / tiles_down + tile row) % tiles_across), so the blocks resident at one
//   time read different rows of x and write different rows of y, spreading both over the DRAM channels instead
//   of having every resident block write the same columns of y.
// Any rows, cols >= 1 work: edge tiles are bounds-checked, and a 16-byte access is used only where its 4 floats
// are in range and 16-byte aligned (cols, respectively rows, a multiple of 4); elsewhere 4 scalar accesses.
#include <cuda_runtime.h>

// @kopt param TILE values=32,64 default=32
// @kopt param BLOCK_ROWS values=4,8,16,32 default=8
// @kopt method smem_padding guard=KOPT_SMEM_PADDING
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS
// @kopt method vectorized_stores guard=KOPT_VECTORIZED_STORES
// @kopt method grouped_launch_ordering guard=KOPT_GROUPED_LAUNCH_ORDERING
// @kopt constraint BLOCK_ROWS <= TILE && TILE * BLOCK_ROWS <= 1024

#ifndef TILE
#define TILE 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif
#ifndef KOPT_SMEM_PADDING
#define KOPT_SMEM_PADDING 0
#endif
#ifndef KOPT_VECTORIZED_ACCESS
#define KOPT_VECTORIZED_ACCESS 0
#endif
#ifndef KOPT_VECTORIZED_STORES
#define KOPT_VECTORIZED_STORES 0
#endif
#ifndef KOPT_GROUPED_LAUNCH_ORDERING
#define KOPT_GROUPED_LAUNCH_ORDERING 0
#endif

namespace {

#if KOPT_SMEM_PADDING
constexpr int kPad = 1;
#else
constexpr int kPad = 0;
#endif
constexpr int kThreads = TILE * BLOCK_ROWS;
static_assert(TILE % BLOCK_ROWS == 0 && kThreads <= 1024, "block shape");

__global__ void __launch_bounds__(kThreads) transpose_tiles(const float* __restrict__ x, float* __restrict__ y,
                                                            int rows, int cols) {
  __shared__ float tile[TILE][TILE + kPad];
#if KOPT_GROUPED_LAUNCH_ORDERING
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned tile_r = b % gridDim.y, tile_c = (b / gridDim.y + tile_r) % gridDim.x;
#else
  const unsigned tile_r = blockIdx.y, tile_c = blockIdx.x;
#endif
  const int r0 = tile_r * TILE, c0 = tile_c * TILE;
  const int t = threadIdx.y * TILE + threadIdx.x;

  // Read x's tile, row by row (coalesced): tile[i][j] = x[r0 + i][c0 + j].
#if KOPT_VECTORIZED_ACCESS
  const bool vec_rows = (cols % 4) == 0;
#pragma unroll
  for (int k = t; k < TILE * TILE / 4; k += kThreads) {
    const int i = k / (TILE / 4), j = 4 * (k % (TILE / 4));
    const int r = r0 + i, c = c0 + j;
    if (r >= rows) continue;
    if (vec_rows && c + 3 < cols) {
      const float4 v = *reinterpret_cast<const float4*>(x + (size_t)r * cols + c);
      tile[i][j] = v.x; tile[i][j + 1] = v.y; tile[i][j + 2] = v.z; tile[i][j + 3] = v.w;
    } else {
      for (int e = 0; e < 4; ++e)
        if (c + e < cols) tile[i][j + e] = x[(size_t)r * cols + c + e];
    }
  }
#else
#pragma unroll
  for (int k = t; k < TILE * TILE; k += kThreads) {
    const int i = k / TILE, j = k % TILE;
    const int r = r0 + i, c = c0 + j;
    if (r < rows && c < cols) tile[i][j] = x[(size_t)r * cols + c];
  }
#endif
  __syncthreads();

  // Write y's tile, row by row (coalesced), reading the tile by columns: y[c0 + j][r0 + i] = tile[i][j].
#if KOPT_VECTORIZED_STORES
  const bool vec_out = (rows % 4) == 0;
#pragma unroll
  for (int k = t; k < TILE * TILE / 4; k += kThreads) {
    const int j = k / (TILE / 4), i = 4 * (k % (TILE / 4));
    const int yr = c0 + j, yc = r0 + i;
    if (yr >= cols) continue;
    if (vec_out && yc + 3 < rows) {
      *reinterpret_cast<float4*>(y + (size_t)yr * rows + yc) =
          make_float4(tile[i][j], tile[i + 1][j], tile[i + 2][j], tile[i + 3][j]);
    } else {
      for (int e = 0; e < 4; ++e)
        if (yc + e < rows) y[(size_t)yr * rows + yc + e] = tile[i + e][j];
    }
  }
#else
#pragma unroll
  for (int k = t; k < TILE * TILE; k += kThreads) {
    const int j = k / TILE, i = k % TILE;
    const int yr = c0 + j, yc = r0 + i;
    if (yr < cols && yc < rows) y[(size_t)yr * rows + yc] = tile[i][j];
  }
#endif
}

}  // namespace

extern "C" void solve(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
  dim3 block(TILE, BLOCK_ROWS);
  transpose_tiles<<<grid, block>>>(x, y, rows, cols);
}
