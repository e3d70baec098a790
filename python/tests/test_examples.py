"""The example ref.py files (examples/*/ref.py): shapes, tolerances, workload models and expected outputs."""

import os

import numpy as np
import pytest
from conftest import MATMUL, PYTHON_DIR, VECADD, P, S

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
    assert m["workload_model"] == {"flops": 1000, "bytes_min": 12000, "bytes_read_min": 8000,
                                   "bytes_written_min": 4000, "dtype": "float32"}
    assert m["sizes_guessed"] is False and [b["shape"] for b in m["buffers"]] == [[1000]] * 3
    assert m["tolerances"]["source"] == "default" and m["tolerances"]["atol"] == 1e-4
    for t in seeds:
        np.testing.assert_array_equal(t["out.c"], t["in.a"] + t["in.b"])


def test_sgemm_naive(harness):
    M, N, K = 48, 40, 256
    m, seeds = run(harness, "sgemm_naive", MATMUL, {"M": M, "N": N, "K": K}, seeds=2)
    assert m["workload_model"] == {"flops": 2 * M * N * K, "bytes_min": 4 * (M * K + K * N + M * N),
                                   "bytes_read_min": 4 * (M * K + K * N), "bytes_written_min": 4 * M * N,
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


SOFTMAX = [P("x"), P("y", const=False), S("rows"), S("cols")]
REDUCTION = [P("x"), P("out", const=False), S("n")]
TRANSPOSE = [P("x"), P("y", const=False), S("rows"), S("cols")]


def test_sgemm_tunable(harness):
    M, N, K = 128, 256, 128
    m, seeds = run(harness, "sgemm_tunable", MATMUL, {"M": M, "N": N, "K": K}, seeds=2)
    assert m["workload_model"] == {"flops": 2 * M * N * K, "bytes_min": 4 * (M * K + K * N + M * N),
                                   "bytes_read_min": 4 * (M * K + K * N), "bytes_written_min": 4 * M * N,
                                   "dtype": "float32"}
    assert [b["shape"] for b in m["buffers"]] == [[M, K], [K, N], [M, N]]
    tol = m["tolerances"]
    assert (tol["atol"], tol["rtol"]) == (1e-3, 1e-4)
    for t in seeds:
        want = t["in.A"].astype(np.float64) @ t["in.B"].astype(np.float64)
        np.testing.assert_allclose(t["out.C"], want, atol=1e-5, rtol=1e-6)


def test_softmax(harness):
    rows, cols = 5, 300
    m, seeds = run(harness, "softmax", SOFTMAX, {"rows": rows, "cols": cols})
    assert m["workload_model"] == {"flops": 5 * rows * cols, "bytes_min": 8 * rows * cols, "bytes_read_min": 4 * rows * cols,
                                   "bytes_written_min": 4 * rows * cols, "dtype": "float32"}
    assert [b["shape"] for b in m["buffers"]] == [[rows, cols]] * 2
    tol = m["tolerances"]
    assert (tol["atol"], tol["rtol"], tol["source"]) == (1e-9, 1e-5, "ref.py")
    for t in seeds:
        x, y = t["in.x"], t["out.y"]
        assert x.min() >= 86 and x.max() < 94  # exp(x) overflows float32 without the max subtraction
        np.testing.assert_allclose(y.sum(axis=1, dtype=np.float64), 1.0, rtol=1e-6)
        # A float32 kernel's way (max, exp, sum, divide, all in float32) is within the tolerance...
        e = np.exp(x - x.max(axis=1, keepdims=True))
        fp32 = e / e.sum(axis=1, keepdims=True, dtype=np.float32)
        assert np.all(np.abs(fp32 - y) <= tol["atol"] + tol["rtol"] * np.abs(y))
        # ...and normalising by a slightly wrong sum is not.
        assert not np.all(np.abs(fp32 * 1.0001 - y) <= tol["atol"] + tol["rtol"] * np.abs(y))


def test_reduction(harness):
    n = 100_003
    m, seeds = run(harness, "reduction", REDUCTION, {"n": n})
    assert m["workload_model"] == {"flops": n, "bytes_min": 4 * n + 4, "bytes_read_min": 4 * n,
                                   "bytes_written_min": 4, "dtype": "float32"}
    assert [b["shape"] for b in m["buffers"]] == [[n], [1]]
    assert (m["tolerances"]["atol"], m["tolerances"]["rtol"]) == (0.05, 0.0)
    for t in seeds:
        assert t["out.out"].dtype == np.float32
        assert t["out.out"][0] == np.float32(t["in.x"].astype(np.float64).sum())


def test_reduction_tolerance_accepts_parallel_orders_and_catches_a_dropped_element():
    """atol = 0.05 (reduction/ref.py): a grid-stride fp32 sum with the longest chains of the kernel's space
    (~3,970 additions per thread) passes with a wide margin; dropping one element does not."""
    rng = np.random.default_rng(7)
    threads, chain = 1024, 3970  # 4M elements: the chains of the worst configuration, fewer of them
    x = (rng.random(threads * chain, dtype=np.float32) * 2 - 1).astype(np.float32)
    exact = x.astype(np.float64).sum()
    acc = np.zeros(threads, np.float32)
    for row in x.reshape(chain, threads):  # element i goes to thread i % threads, in order: a grid-stride loop
        acc += row
    got = float(acc.sum(dtype=np.float32))
    assert abs(got - exact) < 0.05 / 5
    big = int(np.argmax(np.abs(x)))
    assert abs((exact - x[big]) - exact) > 0.05


def test_transpose(harness):
    rows, cols = 33, 70
    m, seeds = run(harness, "transpose", TRANSPOSE, {"rows": rows, "cols": cols})
    assert [b["shape"] for b in m["buffers"]] == [[rows, cols], [cols, rows]]
    assert (m["tolerances"]["atol"], m["tolerances"]["rtol"]) == (0.0, 0.0)
    assert m["workload_model"] == {"flops": rows * cols, "bytes_min": 8 * rows * cols, "bytes_read_min": 4 * rows * cols,
                                   "bytes_written_min": 4 * rows * cols, "dtype": "float32"}
    for t in seeds:
        np.testing.assert_array_equal(t["out.y"], t["in.x"].T)
