"""kopt corpus wrapper (issue 35): flash-linear-attention's chunked log-cumsum-exp along the time axis
(fla/ops/utils/logcumsumexp.py): one program a (batch x head), BT time steps a chunk, the in-chunk prefix sum as a
lower-triangular tl.dot.

The @triton.jit kernel is flash-linear-attention's (fla-core==0.6.0, MIT, the fla-org authors), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: the kernel's own @triton.autotune over BT in {16, 32, 64} x num_warps
{2, 4, 8} keyed on S; grid (B * H,) as in fla/ops/abc/chunk.py.
Sizes: S a power of two >= 16 (tl.dot). float32. Needs torch and triton (and the project's own imports, einops).
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

from fla.ops.utils.logcumsumexp import logcumsumexp_fwd_kernel  # noqa: E402


def setup(*, seed, BH, T, S):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    s = torch.rand(BH, T, S, generator=g) * 8 - 4
    return {"inputs": {"s": s.to(device), "z": torch.empty(BH, T, S, device=device), "BH": BH, "T": T, "S": S},
            "outputs": ["z"]}


def run_kernel(*, s, z, BH, T, S):
    logcumsumexp_fwd_kernel[(BH,)](s, z, T=T, S=S)
