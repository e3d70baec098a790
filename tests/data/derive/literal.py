"""A Triton kernel with literal constexprs at its launch, a num_stages literal, a runtime literal (not a
constexpr) and the name BLOCK in a string: "BLOCK=1024"."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr, CHUNKS: tl.constexpr):
    pid = tl.program_id(0)
    for c in range(CHUNKS):
        offs = (pid * CHUNKS + c) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, scale * (tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)), mask=mask)


def setup(*, seed, n):
    import torch
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g)
    return {"inputs": {"x": x, "y": torch.randn(n, generator=g), "out": torch.empty_like(x), "n": n}, "outputs": ["out"]}


def run_kernel(*, x, y, out, n):
    label = "BLOCK=1024"  # BLOCK=1024 in a comment
    grid = ((n + 1023) // 1024,)
    add_kernel[grid](x, y, out, n, 1, BLOCK=1024, CHUNKS=1, num_stages=2)
