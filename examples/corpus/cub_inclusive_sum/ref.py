"""Reference for CUB's InclusiveSum: solve(const int* x, int* y, int n). y[i] = x[0] + ... + x[i], int32, exact
(kopt draws signed integers in [-64, 64), so no partial sum can overflow at any n up to 2^25, and in practice far
beyond: their mean is -0.5, so the sums drift by about -n/2 and spread like 37 sqrt(n))."""

try:
    import torch
except ImportError:
    torch = None
import numpy as np

shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, **_):
    if torch is not None and isinstance(x, torch.Tensor):
        y.copy_(torch.cumsum(x.to(torch.int64), dim=0).to(torch.int32))
    else:
        y[...] = np.cumsum(x.astype(np.int64)).astype(np.int32)


def workload_model(*, n, **_):
    return {"flops": n, "bytes_read_min": 4 * n, "bytes_written_min": 4 * n, "dtype": "int32"}
