"""Reference for FlashInfer's gelu_tanh_and_mul: solve(const __half* input, __half* out, int num_tokens, int d).
input is (num_tokens, 2d): out = act(input[:, :d]) * input[:, d:] with
gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); float64, an fp16 tolerance.
d must be a multiple of 8 (16-byte vectors).
"""

try:
    import torch
except ImportError:
    torch = None
import numpy as np


def _np(t):
    return t.detach().cpu().float().numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


def _put(out, value):
    if torch is not None and isinstance(out, torch.Tensor):
        out.copy_(torch.from_numpy(np.ascontiguousarray(value)).to(out.dtype))
    else:
        out[...] = value

shapes = {"input": ("num_tokens", 2, "d"), "out": ("num_tokens", "d")}
atol, rtol = 2e-3, 2e-3


def reference(*, input, out, **_):
    x = _np(input).astype(np.float64)
    a, b = x[:, 0, :], x[:, 1, :]
    _put(out, (0.5 * a * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (a + 0.044715 * a ** 3)))) * b)


def workload_model(*, num_tokens, d, **_):
    return {"flops": 8 * num_tokens * d, "bytes_read_min": 4 * num_tokens * d, "bytes_written_min": 2 * num_tokens * d,
            "dtype": "float16"}
