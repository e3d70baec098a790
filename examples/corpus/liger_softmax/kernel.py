"""kopt corpus wrapper (issue 35): Liger-Kernel's softmax forward (liger_kernel/ops/softmax.py), the single-block
kernel: one program a row.

The @triton.jit kernel is Liger-Kernel's (liger-kernel==0.8.5, BSD-2-Clause, LinkedIn), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: _softmax_forward() at n_cols = 4096: calculate_settings(4096) =
(BLOCK_SIZE 4096, num_warps 8); n_cols <= BLOCK_SIZE takes the single-block kernel.
Sizes: n_cols <= 4096 (the BLOCK_SIZE of this launch). float32. Needs torch and triton (and the project's own
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

from liger_kernel.ops.softmax import _softmax_single_block_forward_kernel  # noqa: E402


def setup(*, seed, n_rows, n_cols):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(n_rows, n_cols, generator=g) * 2 - 1) * 8
    return {"inputs": {"x": x.to(device), "y": torch.empty(n_rows, n_cols, device=device), "n_rows": n_rows,
                       "n_cols": n_cols}, "outputs": ["y"]}


def run_kernel(*, x, y, n_rows, n_cols):
    BLOCK_SIZE = 4096  # liger: calculate_settings(n_cols), at n_cols = 4096
    num_warps = 8
    _softmax_single_block_forward_kernel[(n_rows,)](y, y.stride(0), x, x.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                                    num_warps=num_warps)
