"""kopt corpus wrapper (issue 35): flash-linear-attention's causal softmax attention forward (fla/ops/attn/parallel.py,
parallel_attn_fwd_kernel): flash-attention style, an online softmax over BS-key blocks for each BT-query block,
grouped-query heads, fp16, the output and its log-sum-exp (base 2).

The @triton.jit kernel is flash-linear-attention's (fla-core==0.6.0, MIT, the fla-org authors), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: parallel_attn_fwd() on a Hopper-class device
(check_shared_mem('hopper')): BT = 128, BS = min(64, max(16, next_power_of_2(T))) = 64, BK = BV = min(256, max(16,
next_power_of_2(D))) = 128, num_warps 8, grid (cdiv(V, BV) * cdiv(T, BT), B * HQ); no gate, sink bias, window or
varlen.
Sizes: D <= 128 (BK, BV of this launch), HQ a multiple of H. float16. Needs torch and triton (and the project's own
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

from fla.ops.attn.parallel import parallel_attn_fwd_kernel  # noqa: E402


def setup(*, seed, B, T, HQ, H, D):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    q = (torch.rand(B, T, HQ, D, generator=g) * 2 - 1).half()
    k = (torch.rand(B, T, H, D, generator=g) * 2 - 1).half()
    v = (torch.rand(B, T, H, D, generator=g) * 2 - 1).half()
    return {"inputs": {"q": q.to(device), "k": k.to(device), "v": v.to(device),
                       "o": torch.empty(B, T, HQ, D, dtype=torch.float16, device=device),
                       "lse": torch.empty(B, T, HQ, device=device), "B": B, "T": T, "HQ": HQ, "H": H, "D": D},
            "outputs": ["o", "lse"]}


def run_kernel(*, q, k, v, o, lse, B, T, HQ, H, D):
    BT = 128  # fla on Hopper: BT 128, BS = min(64, max(16, next_power_of_2(T))), BK = BV = next_power_of_2(D)
    BS = 64
    BK = 128
    BV = 128
    num_warps = 8
    grid = (triton.cdiv(D, BV) * triton.cdiv(T, BT), B * HQ)
    parallel_attn_fwd_kernel[grid](q=q, k=k, v=v, o=o, g_cumsum=None, sink_bias=None, lse=lse, scale=D ** -0.5,
                                   cu_seqlens=None, chunk_indices=None, B=B, T=T, W=None, H=H, HQ=HQ, G=HQ // H,
                                   K=D, V=D, BT=BT, BS=BS, BK=BK, BV=BV, num_warps=num_warps)
