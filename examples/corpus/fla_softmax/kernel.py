"""kopt corpus wrapper (issue 35): flash-linear-attention's row softmax (fla/ops/utils/softmax.py): one program a row,
the whole row in one block.

The @triton.jit kernel is flash-linear-attention's (fla-core==0.6.0, MIT, the fla-org authors), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: softmax_fwd(): B = next_power_of_2(D) and the kernel's own
@triton.autotune over num_warps in {1, 2, 4, 8, 16, 32} keyed on D; grid (N,).
Sizes: any sizes. float32. Needs torch and triton (and the project's own imports, einops).
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

from fla.ops.utils.softmax import softmax_fwd_kernel  # noqa: E402


def setup(*, seed, N, D):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(N, D, generator=g) * 2 - 1) * 8
    return {"inputs": {"x": x.to(device), "p": torch.empty(N, D, device=device), "N": N, "D": D}, "outputs": ["p"]}


def run_kernel(*, x, p, N, D):
    B = triton.next_power_of_2(D)
    softmax_fwd_kernel[(N,)](x=x, p=p, D=D, B=B)
