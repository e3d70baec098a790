"""Reference for FlashInfer's MergeState: solve(const __half* v_a, const float* s_a, const __half* v_b,
const float* s_b, __half* v_merged, float* s_merged, int seq_len, int num_heads, int head_dim).
v: (seq_len, num_heads, head_dim) fp16; s: (seq_len, num_heads) float32 log-sum-exps in base 2. head_dim in
{64, 128, 256} (the launch's vec_size 8 needs head_dim / 8 threads a head, at most 32); num_heads * head_dim / 8
<= 1024. The LSEs are drawn in [-8, 8) (setup) so that both states weigh in.
"""

try:
    import torch
except ImportError:
    torch = None
import numpy as np


def _np(t):
    return t.detach().cpu().float().numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


def _put(out, value):
    if torch is not None and isinstance(out, torch.Tensor):
        out.copy_(torch.from_numpy(np.ascontiguousarray(value)).to(out.dtype))
    else:
        out[...] = value

atol, rtol = 2e-3, 2e-3


def setup(*, seed, seq_len, num_heads, head_dim):
    rng = np.random.default_rng(seed)
    b = {"v_a": rng.uniform(-1, 1, (seq_len, num_heads, head_dim)).astype(np.float16),
         "s_a": rng.uniform(-8, 8, (seq_len, num_heads)).astype(np.float32),
         "v_b": rng.uniform(-1, 1, (seq_len, num_heads, head_dim)).astype(np.float16),
         "s_b": rng.uniform(-8, 8, (seq_len, num_heads)).astype(np.float32),
         "v_merged": np.zeros((seq_len, num_heads, head_dim), np.float16),
         "s_merged": np.zeros((seq_len, num_heads), np.float32)}
    if torch is not None:
        return {k: torch.from_numpy(v) for k, v in b.items()}
    return b


def reference(*, v_a, s_a, v_b, s_b, v_merged, s_merged, **_):
    sa, sb = _np(s_a).astype(np.float64), _np(s_b).astype(np.float64)
    m = np.maximum(sa, sb)
    wa, wb = np.exp2(sa - m), np.exp2(sb - m)
    va, vb = _np(v_a).astype(np.float64), _np(v_b).astype(np.float64)
    _put(v_merged, (wa[..., None] * va + wb[..., None] * vb) / (wa + wb)[..., None])
    _put(s_merged, np.log2(wa + wb) + m)


def workload_model(*, seq_len, num_heads, head_dim, **_):
    n = seq_len * num_heads
    return {"flops": 3 * n * head_dim, "bytes_read_min": n * (4 * head_dim + 8),
            "bytes_written_min": n * (2 * head_dim + 4), "dtype": "float16"}
