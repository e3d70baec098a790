"""C = A @ B in Triton, float16 inputs and output, float32 accumulation (examples/triton_matmul; the contract
is docs/TRITON.md). The kernel of Triton's matmul tutorial with every tile size tunable; with the
grouped_launch_ordering method, programs walk the output in groups of GROUP_M tile rows, so the tiles of A
and B that neighbouring programs share are still in L2.
"""

import torch
import triton
import triton.language as tl

# @kopt param BLOCK_M values=64,128 default=128
# @kopt param BLOCK_N values=64,128,256 default=128
# @kopt param BLOCK_K values=32,64 default=64
# @kopt param GROUP_M values=4,8 default=8
# @kopt param num_warps values=4,8 default=4
# @kopt param num_stages values=2,3,4 default=3
# @kopt method grouped_launch_ordering
# @kopt constraint BLOCK_M * BLOCK_N <= 4096 * num_warps
# @kopt constraint (BLOCK_M + BLOCK_N) * BLOCK_K * 2 * num_stages <= 196608


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  KOPT_GROUPED_LAUNCH_ORDERING: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    if KOPT_GROUPED_LAUNCH_ORDERING:
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
    else:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def setup(*, seed, M, N, K):
    g = torch.Generator().manual_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.float16).to(device)
    b = torch.randn(K, N, generator=g, dtype=torch.float32).to(torch.float16).to(device)
    c = torch.empty(M, N, dtype=torch.float16, device=device)
    return {"inputs": {"a": a, "b": b, "c": c, "M": M, "N": N, "K": K}, "outputs": ["c"]}


def run_kernel(*, a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3,
               KOPT_GROUPED_LAUNCH_ORDERING=0):
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                        KOPT_GROUPED_LAUNCH_ORDERING=KOPT_GROUPED_LAUNCH_ORDERING,
                        num_warps=num_warps, num_stages=num_stages)
