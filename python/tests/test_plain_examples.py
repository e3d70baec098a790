"""The plain examples' ref.py files (examples/plain/*/ref.py, kernels without @kopt lines): shapes, tolerances,
workload models and expected outputs, through the real harness."""

import os

import numpy as np
from conftest import MATMUL, PYTHON_DIR, P, S

from kopt_harness import golden, signature

PLAIN = os.path.join(os.path.dirname(PYTHON_DIR), "examples", "plain")


def run(harness, example, params, dims, **kw):
    out = harness.out(example)
    opts = golden.Options(ref=os.path.join(PLAIN, example, "ref.py"), params=signature.parse({"params": params}),
                          dims=dims, out=out, **kw)
    golden.generate(opts)
    return harness.manifest(out), harness.tensors(out)


def test_sgemm_tiled_any_size(harness):
    M, N, K = 70, 33, 37  # not multiples of any tile
    m, seeds = run(harness, "sgemm_tiled", MATMUL, {"M": M, "N": N, "K": K}, seeds=2)
    assert [b["shape"] for b in m["buffers"]] == [[M, K], [K, N], [M, N]]
    assert m["workload_model"]["flops"] == 2 * M * N * K
    for t in seeds:
        np.testing.assert_allclose(t["out.C"], t["in.A"].astype(np.float64) @ t["in.B"].astype(np.float64), atol=1e-3, rtol=1e-4)


def test_elementwise_templated(harness):
    m, seeds = run(harness, "elementwise_templated", [P("x"), P("y"), P("out", const=False), S("n")], {"n": 1003})
    assert [b["shape"] for b in m["buffers"]] == [[1003]] * 3
    assert m["workload_model"]["bytes_read_min"] == 8 * 1003
    for t in seeds:
        np.testing.assert_allclose(t["out.out"], 1.5 * t["in.x"] - 0.5 * t["in.y"], rtol=1e-6, atol=1e-6)


def test_reduction_define_tolerance_catches_a_lost_block(harness):
    n = 100003
    m, seeds = run(harness, "reduction_define", [P("x"), P("out", const=False), S("n")], {"n": n})
    assert [b["shape"] for b in m["buffers"]] == [[n], [1]]
    tol = m["tolerances"]
    for t in seeds:
        x = t["in.x"]
        want = x.astype(np.float64).sum()
        assert abs(t["out.out"][0] - want) <= 1e-6 * want
        # A block of 256 x 8 elements lost is far outside the tolerance.
        lost = want - x[:2048].astype(np.float64).sum()
        assert abs(lost - want) > tol["atol"] + tol["rtol"] * want
