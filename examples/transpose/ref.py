"""Reference for examples/transpose: extern "C" void solve(const float* x, float* y, int rows, int cols).

y = x.T: x is (rows, cols), y is (cols, rows), both float32 row-major. A transpose moves values without
arithmetic, so the result must be exact: atol = rtol = 0 (a bitwise copy). x is drawn uniform in [-1, 1) by kopt.
"""

try:
    import torch  # noqa: F401  (its presence makes kopt hand torch tensors, on the GPU when there is one)
except ImportError:
    import numpy as np  # noqa: F401

atol, rtol = 0.0, 0.0

shapes = {"x": ("rows", "cols"), "y": ("cols", "rows")}


def reference(*, x, y, **_):
    y[...] = x.T


def workload_model(*, rows, cols, **_):
    # flops must be > 0: one per element moved. At 1/8 FLOP per byte the roofline is all memory anyway.
    return {"flops": rows * cols, "bytes_read_min": 4 * rows * cols, "bytes_written_min": 4 * rows * cols, "dtype": "float32"}
