"""kopt corpus wrapper (issue 35): Liger-Kernel's Dynamic Tanh (DyT, the normalisation-free LayerNorm replacement)
forward (liger_kernel/ops/dyt.py): y = tanh(alpha x) * gamma + beta.

The @triton.jit kernel is Liger-Kernel's (liger-kernel==0.8.5, BSD-2-Clause, LinkedIn), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: liger_dyt_fwd(): the kernel's own @triton.autotune over BLOCK_N in
{1024, 2048, 4096} x num_stages {1, 2} x num_warps {4, 8, 16} keyed on N; grid (cdiv(N, BLOCK_N), M).
Sizes: any sizes. float32. Needs torch and triton (and the project's own imports, packaging).
"""

import os
import sys

import torch
import triton

_FETCHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "_fetched", "liger-kernel-0.8.5")
if not os.path.isdir(os.path.join(_FETCHED, "liger_kernel")):
    raise ImportError("liger-kernel 0.8.5 is not fetched: run python3 scripts/corpus/fetch.py")
if _FETCHED not in sys.path:
    sys.path.insert(0, _FETCHED)

from liger_kernel.ops.dyt import _dyt_fwd_kernel  # noqa: E402


def setup(*, seed, M, N):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(M, N, generator=g) * 4 - 2
    alpha = torch.rand(1, generator=g) + 0.5
    gamma = torch.rand(N, generator=g) * 2 - 1
    beta = torch.rand(N, generator=g) * 2 - 1
    return {"inputs": {"x": x.to(device), "alpha": alpha.to(device), "gamma": gamma.to(device), "beta": beta.to(device),
                       "y": torch.empty(M, N, device=device), "M": M, "N": N}, "outputs": ["y"]}


def run_kernel(*, x, alpha, gamma, beta, y, M, N):
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_N"]), M)  # noqa: E731
    _dyt_fwd_kernel[grid](x, y, alpha, gamma, beta, True, N)
