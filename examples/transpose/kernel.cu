// Out-of-place transpose: y[c][r] = x[r][c], x is rows x cols and y is cols x rows, float32, row-major.
//
// Each block moves a TILE x TILE tile through shared memory, so that both the reads of x (along its rows) and
// the writes of y (along its rows, x's columns) are coalesced; a block of TILE x BLOCK_ROWS threads walks the
// tile in TILE / BLOCK_ROWS steps. Reading the tile back by columns puts a warp's 32 accesses 32 (or 64) floats
// apart: all in one bank, a 32-way conflict.
// smem_padding: one extra float per tile row moves each row to the next bank, removing the conflict.
// Any rows, cols >= 1 work (edge tiles are bounds-checked).
#include <cuda_runtime.h>

// @kopt param TILE values=32,64 default=32
// @kopt param BLOCK_ROWS values=4,8,16,32 default=8
// @kopt method smem_padding guard=KOPT_SMEM_PADDING
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

namespace {

#if KOPT_SMEM_PADDING
constexpr int kPad = 1;
#else
constexpr int kPad = 0;
#endif
static_assert(TILE % BLOCK_ROWS == 0 && TILE * BLOCK_ROWS <= 1024, "block shape");

__global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_tiles(const float* __restrict__ x, float* __restrict__ y,
                                                                    int rows, int cols) {
  __shared__ float tile[TILE][TILE + kPad];
  const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
  // Read x's tile: rows r0.., columns c0 + threadIdx.x (coalesced).
  const int c = c0 + threadIdx.x;
#pragma unroll
  for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
    int r = r0 + j;
    if (r < rows && c < cols) tile[j][threadIdx.x] = x[(size_t)r * cols + c];
  }
  __syncthreads();
  // Write y's tile: y rows c0.., columns r0 + threadIdx.x (coalesced), read from the tile by columns.
  const int yc = r0 + threadIdx.x;
#pragma unroll
  for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
    int yr = c0 + j;
    if (yr < cols && yc < rows) y[(size_t)yr * rows + yc] = tile[threadIdx.x][j];
  }
}

}  // namespace

extern "C" void solve(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
  dim3 block(TILE, BLOCK_ROWS);
  transpose_tiles<<<grid, block>>>(x, y, rows, cols);
}
