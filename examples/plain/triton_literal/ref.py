"""Reference for examples/plain/triton_literal (a Triton kernel.py with setup() and run_kernel(); docs/TRITON.md):
out = relu(x + bias[None, :]). Any M, N."""

atol, rtol = 1e-6, 1e-6


def reference(*, x, bias, out, **_):
    y = x + bias[None, :]
    out[...] = y * (y > 0)


def workload_model(*, M, N, **_):
    return {"flops": 2 * M * N, "bytes_read_min": 4 * (M * N + N), "bytes_written_min": 4 * M * N, "dtype": "float32"}
