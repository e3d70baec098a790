"""Reference for examples/cutlass_gemm:
extern "C" void solve(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K),
row-major, C = A @ B with bfloat16 inputs and float32 accumulation and output.

Why a float32 C: the products of two bfloat16 numbers (8 significant bits each) are exact in float32, so
the kernel's result differs from the exact sum only by its float32 accumulation. A float32 output keeps that
difference visible (a bfloat16 C would round each output by up to 2^-9 relative, ~4e-2 at |C| ~ 21, hiding
accumulation errors and forcing a tolerance 40x looser). The reference is computed in float64 from the same
bfloat16 inputs: it is the exact sum up to 1e-16, so all of the difference is the kernel's.

Tolerances (kopt accepts |got - want| <= atol + rtol * |want|), for K up to 8192:
Inputs are uniform in [-1, 1) rounded to bfloat16: each product has mean 0 and variance 1/9, so C[i,j] is
typically sqrt(K/9) ~ 21 at K = 4096, yet some C[i,j] lie near zero. Hopper's HGMMA adds a k-block of 16
products into the fp32 accumulator per instruction; within a block the products are aligned to the largest
exponent and truncated (not rounded), so each block can lose up to ~2 ulp of the running sum, 2 * 2^-23 *
|partial sum|. Partial sums stay below ~4 sigma = 4 sqrt(K/9) ~ 85 at K = 4096, 120 at 8192, so the worst
case over K/16 blocks, every loss aligned, is 256 * 2e-5 ~ 5e-3 at K = 4096 and ~1.5e-2 at K = 8192;
truncation errors of random-sign sums grow like a random walk, so the expected error is sqrt(K/16) * 1e-5
~ 2e-4 at K = 4096. Emulated with numpy (M = N = 128, bf16-rounded inputs, each 16-product block summed
exactly, then added to an fp32 accumulator with truncation toward zero, which biases every error the same
way): largest error 5.5e-4 at K = 4096 and 1.4e-3 at K = 8192 (mean 7e-5 and 2e-4).
  atol = 1e-2  covers the aligned worst case at K = 4096 twice over and the random-walk error at K = 8192
               50x over; it matters for outputs near zero, where rtol gives nothing.
  rtol = 1e-3  adds ~2e-2 on a typical output.
A real bug moves outputs by O(1): dropping one k-block of 16 products changes C by ~sqrt(16/9) ~ 1.3 (in the
same emulation, 98% of the outputs then fail), a wrong stride or a tile written twice by far more, and poison
(the kernel not writing C) by everything.
These are 20x tighter than the default bfloat16 tolerance (2e-2 / 2e-2), which is set for bfloat16 outputs.
"""

import torch

atol, rtol = 1e-2, 1e-3


def setup(*, seed, M, N, K, **_):
    g = torch.Generator().manual_seed(seed)
    A = (torch.rand(M, K, generator=g) * 2 - 1).to(torch.bfloat16)
    B = (torch.rand(K, N, generator=g) * 2 - 1).to(torch.bfloat16)
    C = torch.zeros(M, N, dtype=torch.float32)
    return {"A": A, "B": B, "C": C}


def reference(*, A, B, C, M, N, K):
    C.copy_((A.double() @ B.double()).float())


def workload_model(*, M, N, K, **_):
    # Inputs read once (2 bytes each), C written once (4 bytes): the compulsory traffic.
    return {"flops": 2 * M * N * K, "bytes_read_min": 2 * (M * K + K * N), "bytes_written_min": 4 * M * N, "dtype": "bfloat16"}
