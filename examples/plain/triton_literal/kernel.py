"""out = relu(x + bias[None, :]) over an M x N float32 matrix, in Triton, written the plain way: the block sizes
and num_warps are literals at the launch in run_kernel, with no @kopt lines. `kopt annotate` derives them
(examples/plain/README.md). Any M, N (the tiles are masked at the edges).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, bias_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x + b[None, :], 0.0), mask=mask)


def setup(*, seed, M, N):
    g = torch.Generator().manual_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(M, N, generator=g, dtype=torch.float32).to(device)
    bias = torch.randn(N, generator=g, dtype=torch.float32).to(device)
    out = torch.empty_like(x)
    return {"inputs": {"x": x, "bias": bias, "out": out, "M": M, "N": N}, "outputs": ["out"]}


def run_kernel(*, x, bias, out, M, N):
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 128))
    bias_relu_kernel[grid](x, bias, out, M, N, BLOCK_M=32, BLOCK_N=128, num_warps=4)
