"""Reference for examples/vector_add: extern "C" void solve(const float* a, const float* b, float* c, int n).

c = a + b. Works with torch (kopt then hands torch tensors, on the GPU when there is one) or with numpy
alone: the body uses only `+`, which both array types have. Sizes are guessed (1-D of n elements), which is
exactly right here; `shapes` says so, so reports do not flag the sizes as guessed.
"""

try:
    import torch  # noqa: F401  (its presence makes kopt hand torch tensors)
except ImportError:
    import numpy as np  # noqa: F401

shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}


def reference(*, a, b, c, n):
    c[:] = a + b


def workload_model(*, n, **_):
    return {"flops": n, "bytes_read_min": 8 * n, "bytes_written_min": 4 * n, "dtype": "float32"}
