"""Reference for examples/triton_matmul: C = A @ B, float16 in and out, computed in float32 (TF32 off).

Tolerances: with N(0, 1) inputs and K = 4096 the outputs have magnitude ~64, where a float16 ulp is 0.0625
(relative 1e-3). Summing in a different order in float32 and rounding to float16 can move an output by one
ulp, so rtol = 1e-2 (ten ulps) and atol = 1e-2 for outputs near zero.
"""

import torch

atol, rtol = 1e-2, 1e-2

torch.backends.cuda.matmul.allow_tf32 = False


def reference(*, a, b, c, **_):
    c.copy_((a.float() @ b.float()).to(torch.float16))


def workload_model(*, M, N, K, **_):
    return {"flops": 2 * M * N * K, "bytes_read_min": 2 * (M * K + K * N), "bytes_written_min": 2 * M * N, "dtype": "float16"}
