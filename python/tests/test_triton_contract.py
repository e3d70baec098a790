"""The Triton kernel contract and its golden data, with numpy kernels (no triton, no torch needed)."""

import json
import os

import numpy as np
import pytest
from triton_support import CORRECT, VECADD_KERNEL, VECADD_REF, TritonHarness

from kopt_harness import kernelmod, store
from kopt_harness.errors import RefError, UsageError


@pytest.fixture
def th(tmp_path):
    return TritonHarness(tmp_path)


def arr(*values, dtype=np.float32):
    return np.array(values, dtype=dtype)


# --- check_setup_result: pure ----------------------------------------------------------------------------

def test_a_good_setup_result_keeps_order_and_roles():
    ks = kernelmod.check_setup_result({"inputs": {"x": arr(1, 2), "out": arr(0, 0), "n": 2}, "outputs": ["out"]})
    assert list(ks.inputs) == ["x", "out", "n"] and ks.outputs == ["out"]
    params = kernelmod.params_of(ks)
    assert [(p.name, p.kind, p.dtype, p.const) for p in params] == [
        ("x", "pointer", "float32", True), ("out", "pointer", "float32", False), ("n", "scalar", "int64", False)]


@pytest.mark.parametrize("value,match", [
    ([1, 2], "must return a dict"),
    ({"inputs": {"x": arr(1)}}, "lacks 'outputs'"),
    ({"inputs": {"x": arr(1)}, "outputs": ["x"], "extra": 1}, "unknown key"),
    ({"inputs": {}, "outputs": ["x"]}, "non-empty dict"),
    ({"inputs": {"x": arr(1)}, "outputs": "x"}, "non-empty list"),
    ({"inputs": {"x": arr(1)}, "outputs": []}, "non-empty list"),
    ({"inputs": {"x": arr(1)}, "outputs": ["y"]}, "output 'y' is not in 'inputs'"),
    ({"inputs": {"x": arr(1), "n": 3}, "outputs": ["n"]}, "output 'n' is int, not a tensor"),
    ({"inputs": {"x": arr(1), "y": [1.0]}, "outputs": ["x"]}, "input 'y' is list"),
    ({"inputs": {"x": arr(1)}, "outputs": ["x", "x"]}, "lists 'x' twice"),
    ({"inputs": {"x": arr(1), "KOPT_X": 1}, "outputs": ["x"]}, "reserved"),
    ({"inputs": {"x": arr(1), "num_warps": 4}, "outputs": ["x"]}, "reserved"),
    ({"inputs": {"x": np.array([1 + 2j])}, "outputs": ["x"]}, "dtype numpy complex128"),
    ({"inputs": {"x": np.zeros(0, np.float32)}, "outputs": ["x"]}, "no elements"),
    ({"inputs": {"x": arr(1), "s": float("nan")}, "outputs": ["x"]}, "finite"),
])
def test_setup_result_contract_violations_name_the_problem(value, match):
    with pytest.raises(UsageError, match=match):
        kernelmod.check_setup_result(value)


def test_scalar_dtypes():
    assert kernelmod.scalar_dtype(True) == "bool"
    assert kernelmod.scalar_dtype(3) == "int64"
    assert kernelmod.scalar_dtype(0.5) == "float64"
    assert kernelmod.scalar_dtype(np.int32(3)) == "int32"


def test_config_must_not_collide_with_inputs():
    assert kernelmod.check_config({"BLOCK": 64}, {"x"}) == {"BLOCK": 64}
    with pytest.raises(UsageError, match="both a configuration value and an input"):
        kernelmod.check_config({"x": 1}, {"x"})
    with pytest.raises(UsageError, match="JSON object"):
        kernelmod.check_config([1], set())


# --- loading kernel.py -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,missing", [
    ("def run_kernel(**kw):\n    pass\n", "setup"),
    ("def setup(*, seed):\n    return {}\n", "run_kernel"),
    ("run_kernel = 3\ndef setup(*, seed):\n    return {}\n", "run_kernel"),
])
def test_missing_entry_points_are_named(th, text, missing):
    with pytest.raises(UsageError, match=f"defines no function {missing}"):
        kernelmod.load(th.kernel(text=text))


def test_an_import_error_in_kernel_py_is_a_ref_error_about_kernel_py(th):
    with pytest.raises(RefError) as e:
        kernelmod.load(th.kernel(text="import no_such_triton_module\n"))
    assert e.value.file == "kernel.py" and "importing kernel.py" in str(e.value)


# --- golden data ---------------------------------------------------------------------------------------

def test_golden_from_setup_has_the_usual_layout_and_a_kernel_block(th):
    summary, out = th.golden(th.kernel(), seeds=2)
    assert summary["status"] == "ok" and summary["kernel_backend"] == "triton"
    m = th.read(os.path.join(out, "manifest.json"))
    assert m["kernel"]["backend"] == "triton" and m["kernel"]["inputs"] == ["x", "y", "out", "n", "alpha"]
    assert m["kernel"]["outputs"] == ["out"] and m["kernel"]["module"].endswith("kernel.py")
    assert [(b["name"], b["role"], b["shape"], b["shape_source"]) for b in m["buffers"]] == [
        ("x", "input", [1000], "setup"), ("y", "input", [1000], "setup"), ("out", "output", [1000], "setup")]
    assert m["scalars"] == {"n": 1000, "alpha": 2.0}
    assert m["workload_model"] == {"flops": 2000, "bytes_min": 12000}
    assert m["tolerances"]["atol"] == 1e-4 and m["seeds"] == [0, 1]
    for f in m["files"]:
        t = store.read_tensors(os.path.join(out, f["file"]))
        rng = np.random.default_rng(f["seed"])  # the kernel's own setup made the inputs
        np.testing.assert_array_equal(t["in.x"], rng.standard_normal(1000).astype(np.float32))
        np.testing.assert_allclose(t["out.out"], 2.0 * t["in.x"] + t["in.y"], rtol=1e-6)
        assert set(t) == {"in.x", "in.y", "out.out"}
    sig = th.read(os.path.join(out, "signature.json"))["signature"]
    assert [(p["name"], p["kind"], p["const"]) for p in sig["params"]][:3] == [
        ("x", "pointer", True), ("y", "pointer", True), ("out", "pointer", False)]


def test_reference_also_gets_the_dims(th):
    ref = "def reference(*, x, y, out, n_dim_only, **_):\n    out[:] = x + y + 0 * n_dim_only\n"
    text = VECADD_KERNEL.replace("BEHAVIOUR", CORRECT).replace("def setup(*, seed, n):", "def setup(*, seed, n, n_dim_only):")
    _, out = th.golden(th.kernel(text=text), ref_text=ref, dims={"n": 8, "n_dim_only": 5})
    assert os.path.isfile(os.path.join(out, "seed_0.safetensors"))


def test_an_all_zero_input_is_an_error(th):
    text = VECADD_KERNEL.replace("BEHAVIOUR", CORRECT).replace(
        '"y": rng.standard_normal(n).astype(np.float32)', '"y": np.zeros(n, np.float32)')
    with pytest.raises(UsageError, match="returns input 'y' as all zeros"):
        th.golden(th.kernel(text=text))


def test_an_all_zero_inout_initial_value_is_allowed(th):
    text = VECADD_KERNEL.replace("BEHAVIOUR", "out[:] += x").replace(
        '"out": np.empty(n, dtype=np.float32)', '"out": np.zeros(n, dtype=np.float32)')
    ref = "inout = ['out']\ndef reference(*, x, out, **_):\n    out[:] += x\n"
    _, out = th.golden(th.kernel(text=text), ref_text=ref)
    m = th.read(os.path.join(out, "manifest.json"))
    assert {b["name"]: b["role"] for b in m["buffers"]}["out"] == "inout"


def test_setup_must_return_the_same_names_for_every_seed(th):
    text = VECADD_KERNEL.replace("BEHAVIOUR", CORRECT).replace(
        '"n": n, "alpha": 2.0}', '"n": n, "alpha": 2.0, **({"extra": 1} if seed else {})}')
    with pytest.raises(UsageError, match="every seed must return the same names"):
        th.golden(th.kernel(text=text))


def test_seeds_with_identical_inputs_warn(th):
    text = VECADD_KERNEL.replace("BEHAVIOUR", CORRECT).replace("default_rng(seed)", "default_rng(7)")
    _, out = th.golden(th.kernel(text=text))
    assert any("same inputs" in w for w in th.read(os.path.join(out, "manifest.json"))["warnings"])


def test_a_setup_in_ref_py_is_ignored_with_a_warning(th):
    ref = VECADD_REF + "def setup(*, seed, n):\n    raise AssertionError('must not run')\n"
    _, out = th.golden(th.kernel(), ref_text=ref)
    assert any("ref.py defines setup()" in w for w in th.read(os.path.join(out, "manifest.json"))["warnings"])


# --- the command line ------------------------------------------------------------------------------------

def test_cli_golden_with_a_triton_kernel(th):
    kernel, ref = th.kernel(), th.write("ref.py", VECADD_REF)
    r = th.cli("golden", "--triton-kernel", kernel, "--ref", ref, "--dims", '{"n": 64}', "--out", "g", "--seeds", "1")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["kernel_backend"] == "triton" and summary["buffers"] == ["x", "y", "out"]


def test_cli_golden_needs_exactly_one_of_signature_and_triton_kernel(th):
    ref = th.write("ref.py", VECADD_REF)
    r = th.cli("golden", "--ref", ref, "--dims", '{"n": 64}', "--out", "g")
    assert r.returncode == 4 and "exactly one of --signature" in r.stderr


def test_cli_an_exception_in_setup_names_kernel_py_with_a_traceback(th):
    text = "def setup(*, seed, n):\n    raise RuntimeError('setup broke')\ndef run_kernel(**kw):\n    pass\n"
    kernel, ref = th.kernel(text=text), th.write("ref.py", VECADD_REF)
    r = th.cli("golden", "--triton-kernel", kernel, "--ref", ref, "--dims", '{"n": 64}', "--out", "g")
    assert r.returncode == 4
    assert "kopt_harness: error in kernel.py: setup() raised RuntimeError: setup broke" in r.stderr
    assert "Traceback (most recent call last)" in r.stderr


def test_cli_a_contract_violation_exits_4(th):
    text = "def setup(*, seed, n):\n    return {'inputs': {}, 'outputs': []}\ndef run_kernel(**kw):\n    pass\n"
    kernel, ref = th.kernel(text=text), th.write("ref.py", VECADD_REF)
    r = th.cli("golden", "--triton-kernel", kernel, "--ref", ref, "--dims", '{"n": 64}', "--out", "g")
    assert r.returncode == 4 and "'inputs' must be a non-empty dict" in r.stderr


# --- a copy of the kernel runs as the original (KOPT_KERNEL_ORIGIN) --------------------------------------

# A kernel that finds its package beside itself through __file__, as the corpus's Liger and FLA wrappers do.
FINDS_SIBLINGS = '''
import os, sys
_HERE = os.path.dirname(os.path.abspath(__file__))
if not os.path.isdir(os.path.join(_HERE, "vendored")):
    raise ImportError("vendored is not beside " + _HERE)
sys.path.insert(0, os.path.join(_HERE, "vendored"))
from vendored_pkg import VALUE
import sibling_mod
def setup(*, seed, n):
    return {"inputs": {"n": n}, "outputs": []}
def run_kernel(**kw):
    return VALUE + sibling_mod.OTHER
'''


@pytest.fixture
def isolated_imports(monkeypatch):
    """sys.path and the sibling modules as before the test: each test imports FINDS_SIBLINGS afresh."""
    import sys
    monkeypatch.setattr(sys, "path", list(sys.path))
    for m in ("vendored_pkg", "sibling_mod"):
        monkeypatch.delitem(sys.modules, m, raising=False)
    return monkeypatch


def _kernel_with_siblings(tmp_path):
    orig = tmp_path / "project" / "kernel.py"
    (tmp_path / "project" / "vendored" / "vendored_pkg").mkdir(parents=True)
    (tmp_path / "project" / "vendored" / "vendored_pkg" / "__init__.py").write_text("VALUE = 40\n")
    (tmp_path / "project" / "sibling_mod.py").write_text("OTHER = 2\n")
    orig.write_text(FINDS_SIBLINGS)
    copy = tmp_path / "run" / "derived" / "kernel.py"
    copy.parent.mkdir(parents=True)
    copy.write_text("# @kopt param BLOCK values=1,2 default=1\n" + FINDS_SIBLINGS)
    return orig, copy


def test_a_copy_of_a_kernel_that_finds_its_package_beside_itself_imports_as_the_original(tmp_path, isolated_imports):
    monkeypatch = isolated_imports
    orig, copy = _kernel_with_siblings(tmp_path)
    monkeypatch.setenv(kernelmod.ORIGIN_ENV, str(orig))
    module = kernelmod.load(str(copy))
    assert module.__file__ == str(orig)
    assert module.run_kernel() == 42
    assert "@kopt param" in open(module.__spec__.origin).read(), "the code run is the copy's"


def test_without_the_origin_the_copy_fails_as_it_did(tmp_path, isolated_imports):
    monkeypatch = isolated_imports
    _, copy = _kernel_with_siblings(tmp_path)
    monkeypatch.delenv(kernelmod.ORIGIN_ENV, raising=False)
    with pytest.raises(RefError, match="vendored is not beside"):
        kernelmod.load(str(copy))


def test_an_origin_that_is_the_file_itself_or_missing_changes_nothing(tmp_path, isolated_imports):
    monkeypatch = isolated_imports
    orig, _ = _kernel_with_siblings(tmp_path)
    monkeypatch.setenv(kernelmod.ORIGIN_ENV, str(orig))
    assert kernelmod.load(str(orig)).__file__ == str(orig)
    monkeypatch.setenv(kernelmod.ORIGIN_ENV, str(tmp_path / "gone.py"))
    assert kernelmod.load(str(orig)).__file__ == str(orig)
