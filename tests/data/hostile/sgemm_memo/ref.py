"""Reference for tests/data/hostile/sgemm_memo (the same as examples/sgemm_naive):
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K), row-major, C = A @ B.

Tolerances, for fp32 accumulation at K = 4096 (kopt accepts |got - want| <= atol + rtol * |want|).
Inputs are uniform in [-1, 1): each product a*b has mean 0 and variance 1/9, so C[i,j], a sum of K of them,
is typically sqrt(K/9) ~ 21 at K = 4096 (mean |C| ~ 17), yet some C[i,j] lie near zero. The kernel and the
reference both accumulate in fp32 but in different orders (a naive loop adds sequentially; cuBLAS and BLAS
use blocked sums). Each addition rounds by at most u = 2^-24 ~ 6e-8 of the running sum and these errors add
like a random walk, so the order-dependent difference is at most ~ u * sqrt(K) * 21 ~ 8e-5 (one sigma, an
upper estimate: partial sums are smaller than the final one). Measured with numpy (M = N = 256, K = 4096,
sequential fp32 sums against BLAS): std 2.5e-5, largest of 65k outputs 3.2e-4. The aligned worst case,
u * K * 21 ~ 5e-3, does not happen with random-sign inputs. Hence:
  atol = 1e-3  about 3x the largest difference seen, for outputs near zero, where the error (set by the
               partial sums, not by C) would defeat any rtol; room for the larger max over 16.7M outputs.
  rtol = 1e-4  adds ~2e-3 on a typical output, a bound of ~3e-3 there. TF32 tensor-core math (inputs
               rounded to 10 mantissa bits) errs by ~6e-3 (std, emulated with the same sizes) and fails
               64% of the outputs, so a kernel that silently uses TF32 fails; the reference disables TF32.
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


def reference(*, A, B, C, M, N, K):
    C[...] = A @ B


def workload_model(*, M, N, K, **_):
    return {"flops": 2 * M * N * K, "bytes_read_min": 4 * (M * K + K * N), "bytes_written_min": 4 * M * N, "dtype": "float32"}
