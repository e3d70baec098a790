"""kopt corpus wrapper (issue 35): Liger-Kernel's RMSNorm forward (liger_kernel/ops/rms_norm.py), one program a row.

The @triton.jit kernel is Liger-Kernel's (liger-kernel==0.8.5, BSD-2-Clause, LinkedIn), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: rms_norm_forward() at n_cols = 4096: calculate_settings(4096) =
(BLOCK_SIZE 4096, num_warps 8); the row kernel (BLOCK_SIZE > 256); casting mode 'llama' (0), offset 0, eps 1e-6, an
affine weight.
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

from liger_kernel.ops.rms_norm import _rms_norm_forward_kernel  # noqa: E402


def setup(*, seed, n_rows, n_cols):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n_rows, n_cols, generator=g) * 2 - 1
    w = torch.rand(n_cols, generator=g) * 2 - 1
    return {"inputs": {"X": x.to(device), "W": w.to(device), "Y": torch.empty(n_rows, n_cols, device=device),
                       "RSTD": torch.empty(n_rows, device=device), "n_rows": n_rows, "n_cols": n_cols},
            "outputs": ["Y", "RSTD"]}


def run_kernel(*, X, W, Y, RSTD, n_rows, n_cols):
    BLOCK_SIZE = 4096  # liger: calculate_settings(n_cols), at n_cols = 4096
    num_warps = 8
    _rms_norm_forward_kernel[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0), n_cols,
                                        1e-6, 0.0, 0, elementwise_affine=True, BLOCK_SIZE=BLOCK_SIZE,
                                        num_warps=num_warps)
