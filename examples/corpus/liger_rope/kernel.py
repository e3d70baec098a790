"""kopt corpus wrapper (issue 35): Liger-Kernel's rotary position embedding forward (liger_kernel/ops/rope.py), in
place on q and k, one program a (batch, position) row covering every head.

The @triton.jit kernel is Liger-Kernel's (liger-kernel==0.8.5, BSD-2-Clause, LinkedIn), imported from
examples/corpus/_fetched/ where scripts/corpus/fetch.py unpacks the wheel (never committed); only setup() and
run_kernel() are kopt's.
run_kernel() launches it as the project does: rope_forward(): grid (batch * seq_len,), BLOCK_SIZE =
max(next_power_of_2(n_q_head), next_power_of_2(n_kv_head)) (32 at 32 heads), the pad_* constexprs as next powers of
two, rotary_dim = head_dim, cos/sin of one batch (cos_bs 1); num_warps not given (Triton's default, 4).
Sizes: any sizes (head_dim even). float32. Needs torch and triton (and the project's own imports, packaging).
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

from liger_kernel.ops.rope import _triton_rope  # noqa: E402


def setup(*, seed, batch, seq_len, n_q_head, n_kv_head, head_dim):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(seed)
    q = torch.rand(batch, seq_len, n_q_head, head_dim, generator=g) * 2 - 1
    k = torch.rand(batch, seq_len, n_kv_head, head_dim, generator=g) * 2 - 1
    theta = torch.rand(seq_len, head_dim, generator=g) * 6.283185307179586
    return {"inputs": {"q": q.to(device), "k": k.to(device), "cos": torch.cos(theta).to(device),
                       "sin": torch.sin(theta).to(device), "batch": batch, "seq_len": seq_len, "n_q_head": n_q_head,
                       "n_kv_head": n_kv_head, "head_dim": head_dim}, "outputs": ["q", "k"]}


def run_kernel(*, q, k, cos, sin, batch, seq_len, n_q_head, n_kv_head, head_dim):
    pad_hd = triton.next_power_of_2(head_dim)
    pad_n_q_head = triton.next_power_of_2(n_q_head)
    pad_n_kv_head = triton.next_power_of_2(n_kv_head)
    BLOCK_SIZE = max(pad_n_q_head, pad_n_kv_head)
    _triton_rope[(batch * seq_len,)](q, q.stride(1), k, k.stride(1), cos, cos.stride(-2), sin, sin.stride(-2), seq_len,
                                     batch, 1, n_q_head, n_kv_head, head_dim, pad_n_q_head, pad_n_kv_head, pad_hd,
                                     pad_hd, head_dim, BLOCK_SIZE=BLOCK_SIZE, BACKWARD_PASS=False)
