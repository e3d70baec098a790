"""Reference for examples/corpus/fla_parallel_attn (flash-linear-attention): flash-linear-attention's causal softmax
attention forward (fla/ops/attn/parallel.py, parallel_attn_fwd_kernel). float64 on torch tensors.
"""

import math

import torch

atol, rtol = 2e-3, 1e-2


def reference(*, q, k, v, o, lse, B, T, HQ, H, D, **_):
    # one (batch, query head) at a time: T x T float64 scores (128 MiB at T = 4096), not B * HQ of them at once
    G = HQ // H
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    for b in range(B):
        for h in range(HQ):
            s = (q[b, :, h].double() @ k[b, :, h // G].double().T) * D ** -0.5
            s = s.masked_fill(~causal, float("-inf"))
            o[b, :, h] = torch.softmax(s, dim=-1) @ v[b, :, h // G].double()
            lse[b, :, h] = torch.logsumexp(s, dim=-1) / math.log(2.0)


def workload_model(*, B, T, HQ, H, D, **_):
    return {"flops": 2 * B * HQ * T * T * D,
            "bytes_read_min": 2 * B * T * (HQ + 2 * H) * D,
            "bytes_written_min": 2 * B * T * HQ * D + 4 * B * T * HQ, "dtype": "float16"}
