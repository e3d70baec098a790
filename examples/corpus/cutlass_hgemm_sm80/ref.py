"""Reference for the CuTe tutorial HGEMM (TN): solve(const __half* A, const __half* B, __half* C, int M, int N, int K).

Row-major A (M, K) and B (N, K) (K contiguous); C column-major M x N, i.e. a row-major (N, M) array:
C_rm = B @ A^T. The kernel accumulates in fp16 (as the tutorial does), so the tolerance is an fp16 one scaled by
the K-long sums of inputs in [-1, 1): |C| is about sqrt(K/9) (21 at K = 4096), and each fp16 accumulation
step rounds at 2^-11 of the running sum (half an ulp is 0.008 at 16..32), a random walk of ~0.3 over the
K/16 = 256 mma steps in the worst case of K = 4096. atol 1 covers that with room; a wrong tile or an unwritten
element is off by ~20 or NaN.
"""

try:
    import torch
except ImportError:
    torch = None
import numpy as np

shapes = {"A": ("M", "K"), "B": ("N", "K"), "C": ("N", "M")}
atol, rtol = 1.0, 2e-2


def _np(t):
    return t.detach().cpu().float().numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


def _put(out, value):
    if torch is not None and isinstance(out, torch.Tensor):
        out.copy_(torch.from_numpy(np.ascontiguousarray(value)).to(out.dtype))
    else:
        out[...] = value


def reference(*, A, B, C, M, N, K):
    _put(C, _np(B).astype(np.float64) @ _np(A).astype(np.float64).T)


def workload_model(*, M, N, K, **_):
    return {"flops": 2 * M * N * K, "bytes_read_min": 2 * (M * K + N * K), "bytes_written_min": 2 * M * N,
            "dtype": "float16"}
