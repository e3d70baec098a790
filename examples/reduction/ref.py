"""Reference for examples/reduction: extern "C" void solve(const float* x, float* out, int n).

out[0] = sum(x), computed in float64 and stored as float32. x is drawn uniform in [-1, 1) by kopt.

Tolerance, for n = 64M (2^26) elements in fp32. The sum S itself is a random walk: |S| ~ sqrt(n/3) ~ 4700, and
it can be anywhere near zero, so a relative tolerance says nothing: rtol = 0 and atol carries the bound.
A kernel adds in fp32 in some order; each addition rounds its result to the nearest float, an error uniform
within half an ulp, whose rms is about u = 2.4e-8 of the result (2^-24 / sqrt(3), averaged over the mantissa),
and these errors add like a random walk. For a chain of L additions whose partial sums grow like sqrt(k/3), the
error's std is about u * sqrt(sum_k k/3) ~ u * L / sqrt(6); T such chains combined (the threads of a grid-stride
loop, then a tree whose few additions barely count) give u * L * sqrt(T) / sqrt(6) = u * n / sqrt(6 T).
  * this kernel, worst configuration of its space (132 SMs x 1 block x 128 threads: T = 16,896 chains of
    L ~ 3,970): ~5e-3 predicted; simulated with numpy in exactly that order (3 seeds): 3.2e-4 .. 3.8e-3;
  * the default configuration (T = 67,584, L ~ 990): ~2.5e-3 predicted, simulated 5.6e-4 .. 2.1e-3;
  * one sequential fp32 loop (T = 1): ~0.66 predicted; simulated 0.33 .. 1.08.
  atol = 0.05   10x the worst configuration's predicted std, so any reasonable parallel order passes, while a
                kernel that drops or repeats a single element (|x| > 0.05 with probability 95%, on each of 3
                seeds) fails. A plain sequential fp32 sum would fail it too: that is not a GPU reduction.
The error grows like n / sqrt(T): at much larger n, or with far fewer threads, raise atol accordingly.
"""

try:
    import torch
except ImportError:
    torch = None
import numpy as np

atol, rtol = 0.05, 0.0

shapes = {"x": ("n",), "out": (1,)}


def reference(*, x, out, **_):
    if torch is not None and isinstance(x, torch.Tensor):
        out[0] = x.double().sum()
    else:
        out[0] = x.astype(np.float64).sum()


def workload_model(*, n, **_):
    # One addition per element; every element read once and one float written.
    return {"flops": n, "bytes_read_min": 4 * n, "bytes_written_min": 4, "dtype": "float32"}
