"""Reference for examples/plain/reduction_define: extern "C" void solve(const float* x, float* out, int n),
out[0] = sum(x). Any n >= 1.

x is uniform in [0, 1), so the sum is about n / 2. The kernel adds per-thread partial sums in a tree per block and
the blocks' sums with atomicAdd in fp32, in an order that changes between runs; against the reference (float64) the
relative error stays near 1e-6 at n ~ 2e8, so rtol = 1e-4 is generous and still catches a lost block (1 / blocks).
"""

import numpy as np

try:
    import torch
except ImportError:
    torch = None

shapes = {"x": ("n",), "out": (1,)}
atol, rtol = 1.0, 1e-4


def setup(*, seed, n, **_):
    rng = np.random.default_rng(seed)
    x = rng.random(n, dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    if torch is not None:
        return {"x": torch.from_numpy(x), "out": torch.from_numpy(out)}
    return {"x": x, "out": out}


def reference(*, x, out, **_):
    out[0] = x.double().sum() if torch is not None and isinstance(x, torch.Tensor) else x.astype(np.float64).sum()


def workload_model(*, n, **_):
    return {"flops": n, "bytes_read_min": 4 * n, "bytes_written_min": 4, "dtype": "float32"}
