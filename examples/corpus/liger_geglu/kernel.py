"""kopt corpus wrapper (issue 35): Liger-Kernel's GEGLU forward (liger_kernel/ops/geglu.py): c = gelu_tanh(a) * b, one
program a row.

The @triton.jit kernel is Liger-Kernel's (liger-kernel==0.8.5, BSD-2-Clause, LinkedIn), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: geglu_forward() at n_cols = 16384: calculate_settings(16384) =
(BLOCK_SIZE 16384, num_warps 16).
Sizes: n_cols <= 16384 (the BLOCK_SIZE of this launch). float32. Needs torch and triton (and the project's own
imports, packaging).
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

from liger_kernel.ops.geglu import _geglu_tanh_forward_kernel  # noqa: E402


def setup(*, seed, n_rows, n_cols):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(n_rows, n_cols, generator=g) * 8 - 4
    b = torch.rand(n_rows, n_cols, generator=g) * 2 - 1
    return {"inputs": {"a": a.to(device), "b": b.to(device), "c": torch.empty(n_rows, n_cols, device=device),
                       "n_rows": n_rows, "n_cols": n_cols}, "outputs": ["c"]}


def run_kernel(*, a, b, c, n_rows, n_cols):
    BLOCK_SIZE = 16384  # liger: calculate_settings(n_cols), at n_cols = 16384
    num_warps = 16
    _geglu_tanh_forward_kernel[(n_rows,)](a, b, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                          num_warps=num_warps)
