"""golden.generate in-process with numpy ref.py files: buffer shapes, scalars, references, files."""

import hashlib
import os

import numpy as np
import pytest
from conftest import MATMUL, VECADD, P, S
from safetensors.numpy import load_file

from kopt_harness import arrays, golden
from kopt_harness.errors import DimsError, UsageError

MATMUL_SETUP = """
import numpy as np

def setup(*, seed, M, N, K):
    rng = np.random.default_rng(seed)
    return {"A": rng.standard_normal((M, K)).astype(np.float32),
            "B": rng.standard_normal((K, N)).astype(np.float32),
            "C": np.empty((M, N), dtype=np.float32)}

def reference(*, A, B, C, M, N, K):
    C[...] = A @ B
"""

VECADD_PLAIN = """
def reference(*, a, b, c, n):
    c[:] = a + b
"""


# --- buffer shapes: setup, shapes, guessed ---------------------------------------------------------------

def test_setup_gives_exact_shapes_and_values(harness):
    summary, m, seeds = harness.generate(MATMUL_SETUP, MATMUL, {"M": 8, "N": 4, "K": 16}, seeds=2)
    assert summary["status"] == "ok" and summary["backend"] == "numpy"
    bufs = {b["name"]: b for b in m["buffers"]}
    assert bufs["A"] == {"name": "A", "role": "input", "dtype": "float32", "shape": [8, 16], "nbytes": 512,
                         "shape_source": "setup"}
    assert bufs["B"]["shape"] == [16, 4] and bufs["C"]["shape"] == [8, 4] and bufs["C"]["role"] == "output"
    assert m["sizes_guessed"] is False
    rng = np.random.default_rng(1)  # seed 1 is the second file: the values are setup's, not drawn
    np.testing.assert_array_equal(seeds[1]["in.A"], rng.standard_normal((8, 16)).astype(np.float32))
    for t in seeds:
        assert set(t) == {"in.A", "in.B", "out.C"}
        np.testing.assert_allclose(t["out.C"], t["in.A"] @ t["in.B"], rtol=1e-5, atol=1e-5)


def test_setup_dtype_disagreeing_with_signature_names_both(harness):
    text = MATMUL_SETUP.replace('"A": rng.standard_normal((M, K)).astype(np.float32)',
                                '"A": rng.standard_normal((M, K))')
    with pytest.raises(UsageError, match=r"'A' as float64, but solve\(\) declares it float32"):
        harness.generate(text, MATMUL, {"M": 2, "N": 2, "K": 2})


def test_setup_unknown_name_is_an_error_naming_it(harness):
    text = MATMUL_SETUP.replace('"C": np.empty', '"D": np.zeros((1,)), "C": np.empty')
    with pytest.raises(UsageError, match="setup\\(\\) returned 'D'"):
        harness.generate(text, MATMUL, {"M": 2, "N": 2, "K": 2})


def test_pointer_with_no_buffer_is_an_error_naming_it(harness):
    text = MATMUL_SETUP.replace(',\n            "C": np.empty((M, N), dtype=np.float32)', "")
    with pytest.raises(UsageError, match="'C' have no buffer"):
        harness.generate(text, MATMUL, {"M": 2, "N": 2, "K": 2})


def test_setup_buffers_mixed_with_shapes(harness):
    text = MATMUL_SETUP.replace(',\n            "C": np.empty((M, N), dtype=np.float32)', "") + \
        'shapes = {"C": ("M", "N")}\n'
    _, m, seeds = harness.generate(text, MATMUL, {"M": 3, "N": 5, "K": 2}, seeds=1)
    assert [(b["name"], b["shape_source"]) for b in m["buffers"]] == [("A", "setup"), ("B", "setup"), ("C", "shapes")]
    assert seeds[0]["out.C"].shape == (3, 5)


def test_shapes_path_with_names_and_integers(harness):
    text = """
    shapes = {"A": ("M", "K"), "B": ("K", 3), "C": ["M", 3]}
    def reference(*, A, B, C, **_):
        C[...] = A @ B
    """
    _, m, seeds = harness.generate(text, MATMUL, {"M": 4, "N": 3, "K": 5})
    assert [b["shape"] for b in m["buffers"]] == [[4, 5], [5, 3], [4, 3]]
    assert all(b["shape_source"] == "shapes" for b in m["buffers"]) and m["sizes_guessed"] is False
    # The entries themselves, so kopt can size the buffers at other dims (the workload matrix)
    assert [b["shape_expr"] for b in m["buffers"]] == [["M", "K"], ["K", 3], ["M", 3]]
    assert seeds[0]["in.A"].shape == (4, 5)
    np.testing.assert_allclose(seeds[0]["out.C"], seeds[0]["in.A"] @ seeds[0]["in.B"], rtol=1e-6, atol=1e-6)


def test_shapes_with_unknown_dimension_names_it(harness):
    text = 'shapes = {"a": ("X",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN
    with pytest.raises(UsageError, match="dimension 'X'"):
        harness.generate(text, VECADD, {"n": 8})


def test_shapes_missing_a_pointer_is_an_error(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",)}\n' + VECADD_PLAIN
    with pytest.raises(UsageError, match="'c' have no buffer"):
        harness.generate(text, VECADD, {"n": 8})


def test_guessed_sizes_use_the_two_largest_dims(harness):
    text = """
    def reference(*, A, B, C, **_):
        C[:] = A + B
    """
    summary, m, seeds = harness.generate(text, MATMUL, {"M": 6, "N": 2, "K": 5}, seeds=1)
    assert [b["shape"] for b in m["buffers"]] == [[30], [30], [30]]
    assert m["sizes_guessed"] is True and summary["sizes_guessed"] is True
    assert any("sizes were guessed" in w for w in m["warnings"])
    assert all(b["shape_source"] == "guessed" for b in m["buffers"])


def test_guessed_sizes_follow_ptr_size(harness):
    _, m, seeds = harness.generate(VECADD_PLAIN, VECADD, {"n": 1000}, ptr_size=17, seeds=1)
    assert [b["shape"] for b in m["buffers"]] == [[17]] * 3
    np.testing.assert_array_equal(seeds[0]["out.c"], seeds[0]["in.a"] + seeds[0]["in.b"])


# --- scalars ---------------------------------------------------------------------------------------------

SAXPY = [P("x"), P("y", const=False), S("n"), S("alpha", "float32")]


def test_scalars_from_dims_and_from_setup(harness):
    text = """
    import numpy as np
    inout = ["y"]
    shapes = {"x": ("n",), "y": ("n",)}
    def setup(*, seed, n):
        return {"alpha": 0.5 + seed}
    def reference(*, x, y, n, alpha):
        y[:] = alpha * x + y
    """
    _, m, seeds = harness.generate(text, SAXPY, {"n": 16}, seeds=1, seed_base=2)
    assert m["scalars"] == {"n": 16, "alpha": 2.5}
    t = seeds[0]
    np.testing.assert_allclose(t["out.y"], 2.5 * t["in.x"] + t["in.y"], rtol=1e-6)


def test_missing_scalar_is_an_error_naming_it(harness):
    text = 'shapes = {"x": (8,), "y": (8,)}\ndef reference(**kw):\n    pass\n'
    with pytest.raises(UsageError, match="scalar parameter 'alpha' has no value"):
        harness.generate(text, SAXPY, {"n": 8})


def test_setup_scalar_conflicting_with_dim_is_an_error(harness):
    text = 'shapes = {"x": (8,), "y": (8,)}\ndef setup(*, seed, n):\n    return {"n": 9, "alpha": 1.0}\n' \
           'def reference(**kw):\n    pass\n'
    with pytest.raises(UsageError, match="setup\\(\\) returns 9 but the dimension n is 8"):
        harness.generate(text, SAXPY, {"n": 8})


def test_int32_scalar_out_of_range(harness):
    # The command line's fault, said as such: the dimension and the type, not ref.py, not the harness's --dims.
    with pytest.raises(DimsError, match="the dimension n=2147483648 does not fit solve\\(\\)'s int32 parameter 'n'"):
        harness.generate(VECADD_PLAIN, VECADD, {"n": 2**31}, ptr_size=4)


def test_scalars_depending_on_the_seed_are_an_error(harness):
    text = 'shapes = {"x": (8,), "y": (8,)}\ndef setup(*, seed, n):\n    return {"alpha": float(seed)}\n' \
           'def reference(**kw):\n    pass\n'
    with pytest.raises(UsageError, match="different scalars"):
        harness.generate(text, SAXPY, {"n": 8}, seeds=2)


# --- the reference: in place, a returned tensor, a returned dict -----------------------------------------

def test_reference_returning_a_tensor(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\ndef reference(*, a, b, c, n):\n    return a * b\n'
    _, _, seeds = harness.generate(text, VECADD, {"n": 32})
    for t in seeds:
        np.testing.assert_array_equal(t["out.c"], t["in.a"] * t["in.b"])


def test_reference_returning_float64_for_a_float32_output_is_cast(harness):
    text = """
    import numpy as np
    shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}
    def reference(*, a, b, c, n):
        return a.astype(np.float64) - b
    """
    _, m, seeds = harness.generate(text, VECADD, {"n": 32}, seeds=1)
    assert seeds[0]["out.c"].dtype == np.float32
    np.testing.assert_array_equal(seeds[0]["out.c"], seeds[0]["in.a"] - seeds[0]["in.b"])


TWO_OUT = [P("x"), P("s", const=False), P("d", const=False), S("n")]


def test_reference_returning_a_dict(harness):
    text = """
    shapes = {"x": ("n",), "s": ("n",), "d": ("n",)}
    def reference(*, x, s, d, n):
        d[:] = x * 2            # one written in place,
        return {"s": x + 1}     # one returned
    """
    _, _, seeds = harness.generate(text, TWO_OUT, {"n": 10})
    t = seeds[0]
    np.testing.assert_array_equal(t["out.s"], t["in.x"] + 1)
    np.testing.assert_array_equal(t["out.d"], t["in.x"] * 2)


def test_returned_tensor_with_two_outputs_is_an_error(harness):
    text = 'shapes = {"x": ("n",), "s": ("n",), "d": ("n",)}\ndef reference(*, x, s, d, n):\n    return x\n'
    with pytest.raises(UsageError, match="2 outputs"):
        harness.generate(text, TWO_OUT, {"n": 10})


def test_returned_dict_naming_an_input_is_an_error(harness):
    text = 'shapes = {"x": ("n",), "s": ("n",), "d": ("n",)}\ndef reference(*, x, s, d, n):\n    return {"x": x}\n'
    with pytest.raises(UsageError, match="'x', which is not an output"):
        harness.generate(text, TWO_OUT, {"n": 10})


def test_returned_tensor_of_the_wrong_size_is_an_error(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\ndef reference(*, a, b, c, n):\n    return a[:3]\n'
    with pytest.raises(UsageError, match=r"shape \[3\], but its buffer has shape \[10\]"):
        harness.generate(text, VECADD, {"n": 10})


def test_returned_non_tensor_is_an_error(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\ndef reference(**kw):\n    return 3\n'
    with pytest.raises(UsageError, match="returned int"):
        harness.generate(text, VECADD, {"n": 10})


def test_reference_modifying_an_input_is_an_error(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\ndef reference(*, a, b, c, n):\n    a += 1\n    c[:] = a\n'
    with pytest.raises(UsageError, match="modified 'a'"):
        harness.generate(text, VECADD, {"n": 10})


class _SnapshottingNumpy(arrays.NumpyBackend):
    """The numpy backend taking snapshot() copies as the CUDA one does (its inputs then compared to the snapshot)."""
    snapshots = 0

    def snapshot(self, x):
        _SnapshottingNumpy.snapshots += 1
        return x.copy()

    def same_as_snapshot(self, x, snap):
        return arrays.same_bytes(x.reshape(-1).view(np.uint8), snap.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("body, modified", [("c[:] = a + b", None), ("a += 1\n    c[:] = a", "a"),
                                            ("b[-1] = -b[-1]\n    c[:] = a", "b")])
def test_an_input_compared_with_its_snapshot_is_checked_like_one_copied_back(harness, monkeypatch, body, modified):
    monkeypatch.setattr(arrays, "choose", lambda *a, **k: _SnapshottingNumpy())
    _SnapshottingNumpy.snapshots = 0
    text = f'shapes = {{"a": ("n",), "b": ("n",), "c": ("n",)}}\ndef reference(*, a, b, c, n):\n    {body}\n'
    if modified:
        with pytest.raises(UsageError, match=f"modified '{modified}'"):
            harness.generate(text, VECADD, {"n": 10})
        return
    _, _, seeds = harness.generate(text, VECADD, {"n": 10}, seeds=2)
    assert _SnapshottingNumpy.snapshots == 4, "one snapshot a seed and input"
    np.testing.assert_array_equal(seeds[1]["out.c"], seeds[1]["in.a"] + seeds[1]["in.b"])


def test_reference_gets_only_what_it_names(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\ndef reference(*, a, c):\n    c[:] = -a\n'
    _, _, seeds = harness.generate(text, VECADD, {"n": 10}, seeds=1)
    np.testing.assert_array_equal(seeds[0]["out.c"], -seeds[0]["in.a"])


def test_outputs_start_zeroed_and_inout_keeps_its_initial_value(harness):
    text = """
    import numpy as np
    inout = ["d"]
    def setup(*, seed, n):
        return {"s": np.full(n, 7.0, dtype=np.float32)}
    shapes = {"x": ("n",), "d": ("n",)}
    def reference(*, x, s, d, n):
        s += x      # an output: starts at zero whatever setup put there
        d += x      # in-out: starts at its drawn initial value
    """
    _, m, seeds = harness.generate(text, TWO_OUT, {"n": 12})
    assert {b["name"]: b["role"] for b in m["buffers"]} == {"x": "input", "s": "output", "d": "inout"}
    for t in seeds:
        assert set(t) == {"in.x", "in.d", "out.s", "out.d"}
        np.testing.assert_array_equal(t["out.s"], t["in.x"])
        np.testing.assert_array_equal(t["out.d"], t["in.d"] + t["in.x"])
        assert np.any(t["in.d"] != 0)


def test_inout_naming_a_const_pointer_is_an_error(harness):
    text = 'inout = ["x"]\ndef reference(**kw):\n    pass\n'
    with pytest.raises(UsageError, match="declares it const"):
        harness.generate(text, TWO_OUT, {"n": 4})


# --- tolerances ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,atol,rtol", [("float32", 1e-4, 1e-4), ("float64", 1e-8, 1e-7),
                                             ("float16", 1e-2, 1e-2), ("int32", 0.0, 0.0), ("bool", 0.0, 0.0)])
def test_tolerance_defaults_by_output_dtype(harness, dtype, atol, rtol):
    params = [P("x", dtype), P("y", dtype, const=False), S("n")]
    text = 'shapes = {"x": ("n",), "y": ("n",)}\ndef reference(*, x, y, n):\n    y[...] = x\n'
    _, m, _ = harness.generate(text, params, {"n": 8}, seeds=1)
    assert m["tolerances"] == {"atol": atol, "rtol": rtol, "approx_atol": 10 * atol, "approx_rtol": 10 * rtol,
                               "source": "default", "from_ref": []}


def test_tolerance_default_is_the_loosest_output_dtype(harness):
    params = [P("x", "float16"), P("y", "float16", const=False), P("z", "float32", const=False), S("n")]
    text = 'shapes = {"x": ("n",), "y": ("n",), "z": ("n",)}\ndef reference(*, x, y, z, n):\n    y[...] = x\n    z[...] = x\n'
    _, m, _ = harness.generate(text, params, {"n": 8}, seeds=1)
    assert (m["tolerances"]["atol"], m["tolerances"]["rtol"]) == (1e-2, 1e-2)


def test_tolerance_overrides_from_ref(harness):
    text = 'atol = 3e-3\napprox_rtol = 0.5\n' + 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN
    _, m, _ = harness.generate(text, VECADD, {"n": 8}, seeds=1)
    assert m["tolerances"] == {"atol": 3e-3, "rtol": 1e-4, "approx_atol": 3e-2, "approx_rtol": 0.5,
                               "source": "ref.py", "from_ref": ["approx_rtol", "atol"]}


@pytest.mark.parametrize("bad", ["'1e-3'", "-1.0", "float('nan')", "True"])
def test_invalid_tolerance_is_an_error(harness, bad):
    text = f"rtol = {bad}\n" + 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN
    with pytest.raises(UsageError, match="rtol"):
        harness.generate(text, VECADD, {"n": 8}, seeds=1)


# --- workload model --------------------------------------------------------------------------------------

def test_workload_model_is_recorded(harness):
    text = VECADD_PLAIN + 'def workload_model(*, n):\n    return {"flops": n, "bytes_min": 12 * n, "dtype": "float32"}\n'
    _, m, _ = harness.generate(text, VECADD, {"n": 64}, seeds=1)
    assert m["workload_model"] == {"flops": 64, "bytes_min": 768, "dtype": "float32"}


def test_no_workload_model_is_null(harness):
    _, m, _ = harness.generate(VECADD_PLAIN, VECADD, {"n": 4}, seeds=1)
    assert m["workload_model"] is None


def test_workload_model_rejects_bad_numbers(harness):
    text = VECADD_PLAIN + 'def workload_model(*, n):\n    return {"flops": 0, "bytes_min": 12 * n}\n'
    with pytest.raises(UsageError, match="flops = 0"):
        harness.generate(text, VECADD, {"n": 64}, seeds=1)


# --- drawn values, seeds and files -----------------------------------------------------------------------

def test_per_seed_values_differ_and_the_same_seed_repeats(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN
    _, m1, s1 = harness.generate(text, VECADD, {"n": 64}, seeds=3)
    assert m1["seeds"] == [0, 1, 2]
    for i in range(3):
        for j in range(i + 1, 3):
            assert not np.array_equal(s1[i]["in.a"], s1[j]["in.a"])
    assert not np.array_equal(s1[0]["in.a"], s1[0]["in.b"])  # buffers differ within a seed too
    _, m2, s2 = harness.generate(text, VECADD, {"n": 64}, seeds=2, seed_base=1)
    assert m2["seeds"] == [1, 2] and [f["file"] for f in m2["files"]] == ["seed_1.safetensors", "seed_2.safetensors"]
    np.testing.assert_array_equal(s2[0]["in.a"], s1[1]["in.a"])
    np.testing.assert_array_equal(s2[1]["out.c"], s1[2]["out.c"])


def test_setup_ignoring_its_seed_warns(harness):
    text = ("import numpy as np\n"
            "def setup(*, seed, n):\n"
            "    return {'a': np.ones(n, np.float32), 'b': np.ones(n, np.float32), 'c': np.empty(n, np.float32)}\n"
            + VECADD_PLAIN)
    _, m, _ = harness.generate(text, VECADD, {"n": 4}, seeds=2)
    assert any("same inputs" in w for w in m["warnings"])


def test_manifest_contents_and_safetensors_round_trip(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN + \
           'def workload_model(*, n):\n    return {"flops": n, "bytes_min": 12 * n}\n'
    out = harness.out("rt")
    summary, m, seeds = harness.generate(text, VECADD, {"n": 100}, seeds=2, out=out)
    assert m["version"] == 1 and m["meta"]["kind"] == "golden"
    assert m["dims"] == {"n": 100} and m["scalars"] == {"n": 100}
    assert os.path.isabs(m["reference_module"]) and m["reference_module"].endswith("ref.py")
    assert m["reference_timing"] is None and m["sizes_guessed"] is False
    assert [b["nbytes"] for b in m["buffers"]] == [400, 400, 400]
    assert m["params"][3] == {"name": "n", "kind": "scalar", "dtype": "int32", "const": False}
    assert sorted(os.listdir(out)) == ["manifest.json", "seed_0.safetensors", "seed_1.safetensors"]
    assert summary["manifest"] == os.path.join(os.path.abspath(out), "manifest.json")
    for f, ours in zip(m["files"], seeds):
        path = os.path.join(out, f["file"])
        with open(path, "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == f["sha256"]
        theirs = load_file(path)  # the safetensors library reads what we wrote
        assert set(theirs) == set(ours) == {"in.a", "in.b", "out.c"}
        for k in theirs:
            assert theirs[k].dtype == np.float32 and theirs[k].shape == (100,)
            np.testing.assert_array_equal(theirs[k], ours[k])
        np.testing.assert_array_equal(theirs["out.c"], theirs["in.a"] + theirs["in.b"])


def test_stale_seed_files_are_removed(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN
    out = harness.out("stale")
    harness.generate(text, VECADD, {"n": 4}, seeds=3, out=out)
    harness.generate(text, VECADD, {"n": 4}, seeds=1, out=out)
    assert sorted(os.listdir(out)) == ["manifest.json", "seed_0.safetensors"]


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "bool", "float16", "float64"])
def test_every_numpy_dtype_round_trips(harness, dtype):
    params = [P("x", dtype), P("y", dtype, const=False), S("n")]
    text = 'shapes = {"x": ("n",), "y": ("n",)}\ndef reference(*, x, y, n):\n    y[...] = x[::-1]\n'
    _, m, seeds = harness.generate(text, params, {"n": 33}, seeds=1)
    t = seeds[0]
    assert t["in.x"].dtype == np.dtype(dtype) and m["buffers"][0]["nbytes"] == 33 * np.dtype(dtype).itemsize
    np.testing.assert_array_equal(t["out.y"], t["in.x"][::-1])


def test_bfloat16_with_a_numpy_reference_names_torch(harness):
    params = [P("x", "bfloat16"), P("y", "bfloat16", const=False), S("n")]
    with pytest.raises(UsageError, match="bfloat16.*torch"):
        harness.generate('shapes = {"x": ("n",), "y": ("n",)}\n' + 'def reference(**kw):\n    pass\n', params,
                         {"n": 4})


def test_time_reference_on_cpu(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\n' + VECADD_PLAIN
    summary, m, _ = harness.generate(text, VECADD, {"n": 256}, seeds=1, time_reference=True, time_budget_s=0.5)
    t = m["reference_timing"]
    assert t["device"] == "cpu" and t["timer"] == "perf_counter" and t["samples"] >= 10
    assert 0 < t["min_ms"] <= t["p10_ms"] <= t["median_ms"] <= t["p90_ms"]
    assert t["ci95_low_ms"] <= t["median_ms"] <= t["ci95_high_ms"]
    assert summary["reference_median_ms"] == t["median_ms"]


@pytest.mark.parametrize("kw,match", [({"seeds": 0}, "--seeds"), ({"seed_base": -1}, "--seed-base"),
                                      ({"ptr_size": 0}, "--ptr-size"), ({"device": "tpu"}, "--device")])
def test_bad_options(harness, kw, match):
    with pytest.raises(UsageError, match=match):
        harness.generate(VECADD_PLAIN, VECADD, {"n": 4}, **kw)


def test_device_cuda_with_a_numpy_reference_is_an_error(harness):
    with pytest.raises(UsageError, match="--device cuda"):
        harness.generate(VECADD_PLAIN, VECADD, {"n": 4}, device="cuda")


def test_setup_seed_is_the_harness_seed_even_with_a_scalar_named_seed(harness):
    params = [P("x"), P("y", const=False), S("n"), S("seed", "uint64")]
    text = """
    import numpy as np
    seen = []
    def setup(*, seed, n):
        seen.append(seed)
        return {"x": np.full(n, seed + 1, dtype=np.float32)}
    shapes = {"y": ("n",)}
    def reference(*, x, y, n, seed):
        y[:] = x + seed
    """
    _, m, seeds = harness.generate(text, params, {"n": 4, "seed": 100}, seeds=2, seed_base=5)
    assert m["scalars"] == {"n": 4, "seed": 100}
    np.testing.assert_array_equal(seeds[1]["in.x"], [7.0] * 4)   # setup saw harness seed 6
    np.testing.assert_array_equal(seeds[1]["out.y"], [107.0] * 4)  # reference saw the scalar 100


def test_setup_returning_an_all_zero_input_warns(harness):
    text = ("import numpy as np\n"
            "def setup(*, seed, n):\n"
            "    return {'a': np.zeros(n, np.float32), 'b': np.full(n, seed, np.float32), 'c': np.empty(n, np.float32)}\n"
            + VECADD_PLAIN)
    _, m, _ = harness.generate(text, VECADD, {"n": 4}, seeds=1)
    assert any("'a' as all zeros" in w for w in m["warnings"])


def test_non_finite_float_scalar_is_an_error(harness):
    text = 'shapes = {"x": (8,), "y": (8,)}\ndef setup(*, seed, n):\n    return {"alpha": float("inf")}\n' \
           'def reference(**kw):\n    pass\n'
    with pytest.raises(UsageError, match="alpha"):
        harness.generate(text, SAXPY, {"n": 8})


def test_non_finite_expected_outputs_warn(harness):
    text = 'shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}\ndef reference(*, a, b, c, n):\n    c[:] = a / 0.0\n'
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, m, _ = harness.generate(text, VECADD, {"n": 4}, seeds=1)
    assert any("'c' has 4 NaN/Inf values" in w for w in m["warnings"])


@pytest.mark.parametrize("body,match", [
    ("return {'a': np.ones(n + seed, np.float32)}", "with shape \\[5\\], but the first seed's was \\[4\\]"),
    ("return {'a': np.ones(n, np.float32)} if seed == 0 else {'b': np.ones(n, np.float32)}", "same names"),
])
def test_setup_must_agree_across_seeds(harness, body, match):
    text = (f"import numpy as np\nshapes = {{'b': ('n',), 'c': ('n',)}}\ndef setup(*, seed, n):\n    {body}\n"
            + VECADD_PLAIN)
    with pytest.raises(UsageError, match=match):
        harness.generate(text, VECADD, {"n": 4}, seeds=2)


# --- the sealed seed (docs/GATES.md "The sealed seed") ------------------------------------------------------


def test_sealed_seed_is_written_only_to_its_folder_with_a_secret_seed(harness):
    sealed = harness.out("sealed/0123456789abcdef0123456789abcdef")
    _, m, seeds = harness.generate(MATMUL_SETUP, MATMUL, {"M": 4, "N": 3, "K": 5}, seeds=2, sealed_dir=sealed)
    assert m["sealed"] == {"token": "0123456789abcdef0123456789abcdef"}
    assert [f["seed"] for f in m["files"]] == [0, 1] and m["seeds"] == [0, 1], "the sealed seed is listed nowhere"
    assert not any("sealed" in f["file"] for f in m["files"])
    files = os.listdir(sealed)
    assert files == ["seed.safetensors"]
    t = load_file(os.path.join(sealed, "seed.safetensors"))
    assert set(t) == {"in.A", "in.B", "out.C"}
    np.testing.assert_allclose(t["out.C"], t["in.A"] @ t["in.B"], rtol=1e-5)
    for public in seeds:
        assert not np.array_equal(public["in.A"], t["in.A"]), "its inputs are none of the public seeds'"
    # Another golden data made: another secret seed.
    again = harness.out("sealed/fedcba9876543210fedcba9876543210")
    harness.generate(MATMUL_SETUP, MATMUL, {"M": 4, "N": 3, "K": 5}, seeds=2, sealed_dir=again)
    t2 = load_file(os.path.join(again, "seed.safetensors"))
    assert not np.array_equal(t["in.A"], t2["in.A"])


def test_without_a_sealed_folder_the_manifest_names_none(harness):
    _, m, _ = harness.generate(VECADD_PLAIN, VECADD, {"n": 8}, seeds=1)
    assert "sealed" not in m


# --- the ephemeral seed (docs/GATES.md "The ephemeral seed") ------------------------------------------------


def _files_under(root):
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files)


def test_ephemeral_seed_comes_back_as_a_sealed_memfd_and_never_touches_disk(harness, tmp_path):
    import fcntl
    import json
    import socket
    import subprocess
    import sys

    from kopt_harness import golden

    ref = harness.ref(MATMUL_SETUP)
    sig = tmp_path / "signature.json"
    sig.write_text(json.dumps({"signature": {"params": MATMUL}}))
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
           "KOPT_CACHE_DIR": str(home / "kopt"), "TMPDIR": str(home), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(golden.__file__)))}
    before = _files_under(tmp_path)
    ours, theirs = socket.socketpair()
    try:
        out = tmp_path / "never_made"
        p = subprocess.run([sys.executable, "-m", "kopt_harness", "golden", "--ref", ref, "--signature", str(sig),
                            "--dims", '{"M": 4, "N": 3, "K": 5}', "--seeds", "2", "--out", str(out),
                            "--ephemeral-socket", str(theirs.fileno())],
                           pass_fds=[theirs.fileno()], env=env, capture_output=True, text=True, cwd=home, timeout=120)
        assert p.returncode == 0, p.stderr
        summary = json.loads(p.stdout)
        assert summary["status"] == "ok" and summary["ephemeral"] is True and "seed" not in summary
        _, fds, _, _ = socket.recv_fds(ours, 1, 1)
    finally:
        ours.close()
        theirs.close()
    assert len(fds) == 1
    fd = fds[0]
    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        for s in (fcntl.F_SEAL_SHRINK, fcntl.F_SEAL_GROW, fcntl.F_SEAL_WRITE, fcntl.F_SEAL_SEAL):
            assert seals & s, "sealed for good"
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        assert os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:"), "a memory file, under no path"
    finally:
        os.close(fd)
    assert len(data) == summary["bytes"]
    from safetensors.numpy import load as load_bytes

    t = load_bytes(data)
    assert set(t) == {"in.A", "in.B", "out.C"}
    np.testing.assert_allclose(t["out.C"], t["in.A"] @ t["in.B"], rtol=1e-5)
    # Nothing was written: no golden folder, no sealed folder, no cache, no temporary file.
    assert not out.exists()
    assert _files_under(tmp_path) == before
    # Its inputs are none of the public seeds'.
    _, _, public = harness.generate(MATMUL_SETUP, MATMUL, {"M": 4, "N": 3, "K": 5}, seeds=2)
    for s in public:
        assert not np.array_equal(s["in.A"], t["in.A"])


def test_the_same_request_writes_the_same_bytes_every_time(harness):
    """A seed's file is its golden data's identity (its sha256 in the manifest): two makings of the same request give
    the same bytes (safetensors wrote a two-key metadata map in no fixed order, so they differed run to run)."""
    _, m1, t1 = harness.generate(VECADD_PLAIN, VECADD, {"n": 4096}, seeds=3, out=harness.out("a"))
    _, m2, t2 = harness.generate(VECADD_PLAIN, VECADD, {"n": 4096}, seeds=3, out=harness.out("b"))
    assert [f["seed"] for f in m1["files"]] == [0, 1, 2]
    assert m1["files"] == m2["files"]
    for f in m1["files"]:
        a = open(os.path.join(harness.out("a"), f["file"]), "rb").read()
        assert hashlib.sha256(a).hexdigest() == f["sha256"]
        assert a == open(os.path.join(harness.out("b"), f["file"]), "rb").read()


def test_a_seed_file_that_cannot_be_written_fails_the_request_and_leaves_no_thread(harness, monkeypatch):
    """Each seed's file is written on a thread while the next seed is computed: its failure is the request's, and the
    thread ends with it."""
    import threading

    real = golden.write_atomic

    def fail_seed_1(path, data):
        if path.endswith("seed_1.safetensors"):
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(golden, "write_atomic", fail_seed_1)
    with pytest.raises(OSError, match="No space left"):
        harness.generate(VECADD_PLAIN, VECADD, {"n": 4096}, seeds=3)
    assert not [t for t in threading.enumerate() if t.name.startswith("golden-write")]
