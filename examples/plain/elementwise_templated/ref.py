"""Reference for examples/plain/elementwise_templated:
extern "C" void solve(const float* x, const float* y, float* out, int n): out = 1.5 * x - 0.5 * y. Any n >= 1.
"""

try:
    import torch  # noqa: F401  (its presence makes kopt hand torch tensors)
except ImportError:
    import numpy as np  # noqa: F401

shapes = {"x": ("n",), "y": ("n",), "out": ("n",)}
atol, rtol = 1e-6, 1e-6


def reference(*, x, y, out, n):
    out[:] = 1.5 * x - 0.5 * y


def workload_model(*, n, **_):
    return {"flops": 3 * n, "bytes_read_min": 8 * n, "bytes_written_min": 4 * n, "dtype": "float32"}
