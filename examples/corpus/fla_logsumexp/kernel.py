"""kopt corpus wrapper (issue 35): flash-linear-attention's row log-sum-exp (fla/ops/utils/logsumexp.py): a reduction,
one program a (row, 64K block).

The @triton.jit kernel is flash-linear-attention's (fla-core==0.6.0, MIT, the fla-org authors), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: logsumexp_fwd(): B = min(next_power_of_2(D), 65536), ND = cdiv(D, B),
grid (N, ND), no scale (its heuristics set HAS_SCALE), and the kernel's own @triton.autotune over num_warps in {1,
2, 4, 8, 16, 32} keyed on D.
Sizes: D <= 65536 (one block a row, z of one column). float32. Needs torch and triton (and the project's own
imports, einops).
"""

import os
import sys

import torch
import triton

_FETCHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "_fetched", "fla-core-0.6.0")
if not os.path.isdir(os.path.join(_FETCHED, "fla")):
    raise ImportError("fla-core 0.6.0 is not fetched: run python3 scripts/corpus/fetch.py")
if _FETCHED not in sys.path:
    sys.path.insert(0, _FETCHED)

from fla.ops.utils.logsumexp import logsumexp_fwd_kernel  # noqa: E402


def setup(*, seed, N, D):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(N, D, generator=g) * 2 - 1) * 8
    return {"inputs": {"x": x.to(device), "z": torch.empty(N, 1, device=device), "N": N, "D": D}, "outputs": ["z"]}


def run_kernel(*, x, z, N, D):
    B = min(triton.next_power_of_2(D), 64 * 1024)
    logsumexp_fwd_kernel[(N, triton.cdiv(D, B))](x=x, z=z, scale=None, D=D, B=B)
