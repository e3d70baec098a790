"""Row-wise softmax in Triton: y[r, :] = softmax(x[r, :]) for an n_rows x n_cols float32 matrix
(examples/triton_softmax; the contract is docs/TRITON.md).

One program per row, the whole row in one block (BLOCK_SIZE >= n_cols, a power of two), as in Triton's
fused-softmax tutorial: the row is read once and written once, so the kernel is memory-bound and its floor
is 8 bytes per element. With the persistent_kernel method, a few programs per SM loop over the rows instead
(grid = 4 x the SM count), which is where num_stages (software pipelining of the row loop) matters.
"""

import torch
import triton
import triton.language as tl

# @kopt param BLOCK_SIZE values=4096,8192 default=4096
# @kopt param num_warps values=4,8,16,32 default=8
# @kopt param num_stages values=1,2,3 default=2
# @kopt method persistent_kernel


@triton.jit
def softmax_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, n_rows, n_cols, rows_per_program,
                   BLOCK_SIZE: tl.constexpr):
    # Program p handles rows p, p + P, p + 2P, ... (P programs); rows past the end are masked off.
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_SIZE)
    for i in range(0, rows_per_program):
        row = pid + i * step
        mask = (cols < n_cols) & (row < n_rows)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        den = tl.sum(num, axis=0)
        tl.store(y_ptr + row * y_row_stride + cols, num / den, mask=mask)


def setup(*, seed, n_rows, n_cols):
    g = torch.Generator().manual_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(n_rows, n_cols, generator=g, dtype=torch.float32).to(device)
    y = torch.empty_like(x)
    return {"inputs": {"x": x, "y": y, "n_rows": n_rows, "n_cols": n_cols}, "outputs": ["y"]}


_SM_COUNT = {}


def run_kernel(*, x, y, n_rows, n_cols, BLOCK_SIZE=4096, num_warps=8, num_stages=2, KOPT_PERSISTENT_KERNEL=0):
    if BLOCK_SIZE < n_cols:
        raise ValueError(f"BLOCK_SIZE {BLOCK_SIZE} < n_cols {n_cols}: this kernel keeps a whole row in one block")
    if KOPT_PERSISTENT_KERNEL:
        dev = x.device.index or 0
        if dev not in _SM_COUNT:
            _SM_COUNT[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
        grid = (min(n_rows, 4 * _SM_COUNT[dev]),)
    else:
        grid = (n_rows,)
    softmax_kernel[grid](y, x, x.stride(0), y.stride(0), n_rows, n_cols, triton.cdiv(n_rows, grid[0]),
                         BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_stages=num_stages)
