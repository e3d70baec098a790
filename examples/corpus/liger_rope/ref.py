"""Reference for examples/corpus/liger_rope (Liger-Kernel): Liger-Kernel's rotary position embedding forward
(liger_kernel/ops/rope.py), in place on q and k, one program a (batch, position) row covering every head. float64 on
torch tensors.
"""

import torch

inout = ["q", "k"]
atol, rtol = 1e-5, 1e-5


def _rotate(t, cos, sin):
    h = t.shape[-1] // 2
    c, s = cos[None, :, None, :h], sin[None, :, None, :h]
    t1, t2 = t[..., :h], t[..., h:]
    return torch.cat([t1 * c - t2 * s, t2 * c + t1 * s], dim=-1)


def reference(*, q, k, cos, sin, **_):
    c, s = cos.double(), sin.double()
    q.copy_(_rotate(q.double(), c, s))
    k.copy_(_rotate(k.double(), c, s))


def workload_model(*, batch, seq_len, n_q_head, n_kv_head, head_dim, **_):
    return {"flops": 6 * batch * seq_len * (n_q_head + n_kv_head) * head_dim,
            "bytes_read_min": 4 * (batch * seq_len * (n_q_head + n_kv_head) * head_dim + seq_len * head_dim),
            "bytes_written_min": 4 * batch * seq_len * (n_q_head + n_kv_head) * head_dim, "dtype": "float32"}
