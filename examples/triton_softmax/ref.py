"""Reference for examples/triton_softmax: y = softmax(x, dim=-1), float32.

Tolerances: a softmax of 4096 N(0, 1) values ranges over about [3e-6, 1e-2], so the float32 default
atol = 1e-4 would accept almost any output; here atol = 1e-7 and rtol = 1e-5. Triton's exp (ex2.approx
after a multiply by log2 e) and its division are within a few ulps, and a tree sum of 4096 terms in a
different order moves the denominator by about log2(4096) ulps (~7e-7 relative): well inside 1e-5.
"""

import torch

atol, rtol = 1e-7, 1e-5


def reference(*, x, y, **_):
    y.copy_(torch.softmax(x, dim=-1))


def workload_model(*, n_rows, n_cols, **_):
    # max, subtract, exp, sum, divide: ~5 flops per element; x read once and y written once.
    return {"flops": 5 * n_rows * n_cols, "bytes_read_min": 4 * n_rows * n_cols, "bytes_written_min": 4 * n_rows * n_cols, "dtype": "float32"}
