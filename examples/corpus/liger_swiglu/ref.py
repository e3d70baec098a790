"""Reference for examples/corpus/liger_swiglu (Liger-Kernel): Liger-Kernel's SwiGLU forward
(liger_kernel/ops/swiglu.py). float64 on torch tensors.
"""

import torch

atol, rtol = 1e-5, 1e-5


def reference(*, a, b, c, **_):
    a64 = a.double()
    c.copy_(a64 * torch.sigmoid(a64) * b.double())


def workload_model(*, n_rows, n_cols, **_):
    return {"flops": 6 * n_rows * n_cols,
            "bytes_read_min": 8 * n_rows * n_cols,
            "bytes_written_min": 4 * n_rows * n_cols, "dtype": "float32"}
