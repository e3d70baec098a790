"""Reference for examples/corpus/liger_geglu (Liger-Kernel): Liger-Kernel's GEGLU forward (liger_kernel/ops/geglu.py).
float64 on torch tensors.
"""

import torch

atol, rtol = 1e-5, 1e-5


def reference(*, a, b, c, **_):
    a64 = a.double()
    c.copy_(0.5 * a64 * (1 + torch.tanh(0.7978845608028654 * (a64 + 0.044715 * a64 ** 3))) * b.double())


def workload_model(*, n_rows, n_cols, **_):
    return {"flops": 10 * n_rows * n_cols,
            "bytes_read_min": 8 * n_rows * n_cols,
            "bytes_written_min": 4 * n_rows * n_cols, "dtype": "float32"}
