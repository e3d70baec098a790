"""Reference for CUTLASS's float LayerNorm: solve(const float* x, const float* gamma, const float* beta, float* out,
int M, int N). out = (x - mean) / sqrt(var + 1e-5) * gamma + beta per row (population variance), float64.
N % 4 == 0 and 128 <= N <= 4096 (the launch path this wrapper takes).
"""

try:
    import torch
except ImportError:
    torch = None
import numpy as np

shapes = {"x": ("M", "N"), "gamma": ("N",), "beta": ("N",), "out": ("M", "N")}
atol, rtol = 1e-4, 1e-4


def _np(t):
    return t.detach().cpu().numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


def _put(out, value):
    if torch is not None and isinstance(out, torch.Tensor):
        out.copy_(torch.from_numpy(np.ascontiguousarray(value)).to(out.dtype))
    else:
        out[...] = value


def reference(*, x, gamma, beta, out, **_):
    x64 = _np(x).astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
    _put(out, (x64 - mean) / np.sqrt(var + 1e-5) * _np(gamma).astype(np.float64) + _np(beta).astype(np.float64))


def workload_model(*, M, N, **_):
    return {"flops": 8 * M * N, "bytes_read_min": 4 * (M * N + 2 * N), "bytes_written_min": 4 * M * N,
            "dtype": "float32"}
