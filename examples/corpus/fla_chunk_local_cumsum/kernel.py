"""kopt corpus wrapper (issue 35): flash-linear-attention's chunk-local cumulative sum of the log gates
(fla/ops/utils/cumsum.py, chunk_local_cumsum_scalar_kernel): a scan inside each chunk of BT time steps, as gated
linear attention (GLA, Gated DeltaNet) uses it.

The @triton.jit kernel is flash-linear-attention's (fla-core==0.6.0, MIT, the fla-org authors), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: chunk_local_cumsum_scalar() with chunk_size 64 (the chunk size of
fla's chunked GLA / DeltaNet kernels): BT = 64, grid (cdiv(T, BT) * B * H,), forward, no scale, and the kernel's own
autotune (fla_cache_autotune) over num_warps in {1, 2, 4, 8}.
Sizes: any sizes; the scan restarts every 64 steps. float32. Needs torch and triton (and the project's own imports,
einops).
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

from fla.ops.utils.cumsum import chunk_local_cumsum_scalar_kernel  # noqa: E402


def setup(*, seed, B, T, H):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    s = -torch.rand(B, T, H, generator=g) * 0.5
    return {"inputs": {"s": s.to(device), "o": torch.empty(B, T, H, device=device), "B": B, "T": T, "H": H},
            "outputs": ["o"]}


def run_kernel(*, s, o, B, T, H):
    BT = 64  # fla: chunk_size 64 in the chunked GLA / DeltaNet kernels
    chunk_local_cumsum_scalar_kernel[(triton.cdiv(T, BT) * B * H,)](s=s, o=o, scale=None, cu_seqlens=None,
                                                                   chunk_indices=None, T=T, B=B, H=H, BT=BT,
                                                                   REVERSE=False, USE_GRAPH=False)
