"""A Triton kernel whose launch reads named locals of run_kernel (BLOCK_SIZE = 1024, NW = 8), as Triton's tutorials
write it; ROWS is assigned twice, so it is not one constant."""

import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr, ROWS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE * ROWS + tl.arange(0, BLOCK_SIZE)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def setup(*, seed, n):
    import torch
    x = torch.randn(n, generator=torch.Generator().manual_seed(seed))
    return {"inputs": {"x": x, "y": torch.empty_like(x), "n": n}, "outputs": ["y"]}


def run_kernel(*, x, y, n):
    BLOCK_SIZE = 1024
    NW = 8
    ROWS = 1
    if n > 1 << 30:
        ROWS = 2
    grid = (triton.cdiv(n, BLOCK_SIZE * ROWS),)
    copy_kernel[grid](x, y, n, BLOCK_SIZE=BLOCK_SIZE, ROWS=ROWS, num_warps=NW)
