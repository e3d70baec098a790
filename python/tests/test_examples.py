"""The example ref.py files the lead uses (examples/vector_add, examples/sgemm_naive)."""

import os

import numpy as np
import pytest
from conftest import MATMUL, PYTHON_DIR, VECADD

from kopt_harness import golden, signature

EXAMPLES = os.path.join(os.path.dirname(PYTHON_DIR), "examples")


def run(harness, example, params, dims, **kw):
    out = harness.out(example)
    opts = golden.Options(ref=os.path.join(EXAMPLES, example, "ref.py"), params=signature.parse({"params": params}),
                          dims=dims, out=out, **kw)
    golden.generate(opts)
    return harness.manifest(out), harness.tensors(out)


def test_vector_add(harness):
    m, seeds = run(harness, "vector_add", VECADD, {"n": 1000})
    assert m["workload_model"] == {"flops": 1000, "bytes_min": 12000, "dtype": "float32"}
    assert m["sizes_guessed"] is False and [b["shape"] for b in m["buffers"]] == [[1000]] * 3
    assert m["tolerances"]["source"] == "default" and m["tolerances"]["atol"] == 1e-4
    for t in seeds:
        np.testing.assert_array_equal(t["out.c"], t["in.a"] + t["in.b"])


def test_sgemm_naive(harness):
    M, N, K = 48, 40, 256
    m, seeds = run(harness, "sgemm_naive", MATMUL, {"M": M, "N": N, "K": K}, seeds=2)
    assert m["workload_model"] == {"flops": 2 * M * N * K, "bytes_min": 4 * (M * K + K * N + M * N),
                                   "dtype": "float32"}
    assert [b["shape"] for b in m["buffers"]] == [[M, K], [K, N], [M, N]]
    tol = m["tolerances"]
    assert (tol["atol"], tol["rtol"], tol["source"]) == (1e-3, 1e-4, "ref.py")
    for t in seeds:
        want = t["in.A"].astype(np.float64) @ t["in.B"].astype(np.float64)
        np.testing.assert_allclose(t["out.C"], want, atol=tol["atol"], rtol=tol["rtol"])
        assert np.any(t["in.A"] != 0) and t["in.A"].min() >= -1 and t["in.A"].max() < 1
    assert not np.array_equal(seeds[0]["in.A"], seeds[1]["in.A"])


@pytest.mark.parametrize("tf32_like", [False, True])
def test_sgemm_tolerance_separates_fp32_from_tf32(tf32_like):
    """The sgemm tolerance accepts a differently-ordered fp32 sum and rejects TF32-rounded inputs."""
    rng = np.random.default_rng(0)
    M, N, K = 64, 64, 4096
    A = rng.random((M, K), dtype=np.float32) * 2 - 1
    B = rng.random((K, N), dtype=np.float32) * 2 - 1
    want = A @ B
    if tf32_like:  # round inputs to 10 mantissa bits, as tensor cores do in TF32
        def tf32(x):
            u = x.view(np.uint32).astype(np.uint64)
            return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
        got = (tf32(A).astype(np.float64) @ tf32(B).astype(np.float64)).astype(np.float32)
    else:  # sequential fp32 accumulation, as a naive kernel does
        got = np.zeros((M, N), np.float32)
        for k in range(K):
            got += np.outer(A[:, k], B[k, :])
    ok = np.abs(got - want) <= 1e-3 + 1e-4 * np.abs(want)
    if tf32_like:
        assert ok.mean() < 0.6
    else:
        assert ok.all()
