"""Reference for examples/plain/sgemm_tiled:
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K), row-major, C = A @ B.

Any M, N, K: the kernel checks its edges. Tolerances as examples/sgemm_tunable/ref.py (fp32 sums in another order);
the reference disables TF32.
"""

try:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
except ImportError:
    torch = None
import numpy as np

atol, rtol = 1e-3, 1e-4


def setup(*, seed, M, N, K, **_):
    rng = np.random.default_rng(seed)
    A = (rng.random((M, K), dtype=np.float32) * 2 - 1).astype(np.float32)
    B = (rng.random((K, N), dtype=np.float32) * 2 - 1).astype(np.float32)
    C = np.zeros((M, N), dtype=np.float32)
    if torch is not None:
        return {"A": torch.from_numpy(A), "B": torch.from_numpy(B), "C": torch.from_numpy(C)}
    return {"A": A, "B": B, "C": C}


def reference(*, A, B, C, **_):
    C[...] = A @ B


def workload_model(*, M, N, K, **_):
    return {"flops": 2 * M * N * K, "bytes_read_min": 4 * (M * K + K * N), "bytes_written_min": 4 * M * N, "dtype": "float32"}
