"""Reference for sanitize/uninit_shared_halo: y[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1], the neighbours past the
array's ends counting as 0. numpy only."""
import numpy as np

shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    p = np.zeros(n + 2, dtype=np.float64)
    p[1:-1] = x
    y[:] = (0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:]).astype(np.float32)
