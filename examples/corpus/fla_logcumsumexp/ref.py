"""Reference for examples/corpus/fla_logcumsumexp (flash-linear-attention): flash-linear-attention's chunked log-
cumsum-exp along the time axis (fla/ops/utils/logcumsumexp.py). float64 on torch tensors.
"""

import torch

atol, rtol = 1e-4, 1e-4


def reference(*, s, z, **_):
    z.copy_(torch.logcumsumexp(s.double(), dim=1))


def workload_model(*, BH, T, S, **_):
    return {"flops": 4 * BH * T * S,
            "bytes_read_min": 4 * BH * T * S,
            "bytes_written_min": 4 * BH * T * S, "dtype": "float32"}
