"""Reference for examples/softmax: extern "C" void solve(const float* x, float* y, int rows, int cols).

y = softmax(x) along each row of the (rows, cols) matrix, computed in float64 and stored as float32.

Inputs: x = 90 + 4u with u uniform in [-1, 1), so x lies in [86, 94). exp(94) overflows float32 (its largest
value is ~exp(88.7)), so a kernel that does not subtract the row maximum produces inf/NaN and fails. The
differences x - max lie in [-8, 0], so at cols = 4096 the row sum is ~cols/8 ~ 512 and the outputs lie between
~6.5e-7 and ~2e-3 (never below exp(-8)/cols ~ 8e-8).

Tolerances (|got - want| <= atol + rtol * |want|): a float32 kernel errs relatively. x - max is exact (both
operands lie within a factor of two of each other); expf is within 2 ulp (2.4e-7 relative); the row sum adds
positive terms (no cancellation), so its relative error is at most (additions on the longest path) x 6e-8: in
this kernel a thread adds cols/THREADS terms (<= 32 at cols = 4096) and a tree of log2(THREADS) <= 10 levels
combines the threads, a worst case of ~42 x 6e-8 ~ 2.5e-6 (random rounding makes it far smaller); the online
variant's rescalings (about ln(terms) per thread) and the final division add a few ulp. So a correct kernel is
within ~3e-6 relative in the worst case (measured in the emulated test: ~2e-7).
  rtol = 1e-5   over 3x that worst case.
  atol = 1e-9   negligible next to every output (>= 8e-8), so even the smallest outputs are checked relatively;
                it is not 0 only so that an exact 0 (an underflowed exp at other sizes) compares sanely.
A kernel that normalises by a wrong sum (one warp's, say) is off by a factor, and one that skips elements leaves
them poisoned: both fail by orders of magnitude.
"""

try:
    import torch
except ImportError:
    torch = None
import numpy as np

atol, rtol = 1e-9, 1e-5


def setup(*, seed, rows, cols, **_):
    rng = np.random.default_rng(seed)
    x = (90 + 4 * (rng.random((rows, cols), dtype=np.float32) * 2 - 1)).astype(np.float32)
    y = np.zeros((rows, cols), dtype=np.float32)
    if torch is not None:
        return {"x": torch.from_numpy(x), "y": torch.from_numpy(y)}
    return {"x": x, "y": y}


def reference(*, x, y, **_):
    if torch is not None and isinstance(x, torch.Tensor):
        y.copy_(torch.softmax(x.double(), dim=-1))
    else:
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
        y[...] = e / e.sum(axis=-1, keepdims=True)


def workload_model(*, rows, cols, **_):
    # Per element: a max, a subtraction, an exponential, an addition and a multiplication (counted 1 each).
    # bytes_min: x read once and y written once (an online softmax still reads x twice; the floor does not).
    return {"flops": 5 * rows * cols, "bytes_read_min": 4 * rows * cols, "bytes_written_min": 4 * rows * cols, "dtype": "float32"}
