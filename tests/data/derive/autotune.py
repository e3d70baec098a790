"""A Triton kernel with an existing @triton.autotune: kopt reads its configs and searches their values itself."""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
    ],
    key=["n"],
)
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def setup(*, seed, n):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g)
    return {"inputs": {"x": x, "y": torch.empty_like(x), "n": n}, "outputs": ["y"]}


def run_kernel(*, x, y, n, **extra):
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    scale_kernel[grid](x, y, n)
