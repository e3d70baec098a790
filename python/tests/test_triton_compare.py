"""The Triton runner's comparison and result vocabulary: the same rule, fields and text as the C++ runner
(src/runner/compare.cpp, stats.cpp, outcome.cpp). Pure numpy."""

import json
import math
import os
import re

import numpy as np
import pytest

from kopt_harness import compare, runresult, sampling

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def raw(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def cmp(expected, actual, atol=1e-4, rtol=1e-4, dtype="float32", shape=None):
    expected, actual = np.asarray(expected), np.asarray(actual)
    return compare.compare(dtype, shape if shape is not None else expected.shape, raw(expected), raw(actual), atol, rtol)


def test_equal_outputs_are_bitwise_ok():
    e = np.arange(6, dtype=np.float32)
    c = cmp(e, e.copy())
    assert c.ok and c.bitwise_equal and c.mismatches == 0 and c.summary() == "ok (bitwise) max_abs=0 max_rel=0 rel_l2=0"


def test_tolerance_rule_and_errors():
    e = np.array([1.0, 2.0, 0.0, -4.0], np.float32)
    a = e + np.array([1e-5, 3e-4, 5e-5, -1e-3], np.float32)
    c = cmp(e, a, atol=1e-4, rtol=1e-4)
    # |d| <= 1e-4 + 1e-4|e|: 1e-5 ok; 3e-4 > 3e-4? (2.0: bound 3e-4) borderline in float32 -> compute exactly
    bound = 1e-4 + 1e-4 * np.abs(e.astype(np.float64))
    d = np.abs(a.astype(np.float64) - e.astype(np.float64))
    assert c.mismatches == int((d > bound).sum())
    assert c.max_abs_err == pytest.approx(d.max())
    assert c.max_rel_err == pytest.approx(max(d[i] / abs(e[i]) for i in range(4) if e[i] != 0))
    assert c.rel_l2_err == pytest.approx(math.sqrt((d ** 2).sum() / (e.astype(np.float64) ** 2).sum()))
    assert c.first_bad_index == int(np.argmax(d > bound))


def test_first_bad_coordinates_and_summary_text():
    e = np.zeros((3, 4), np.float32) + 1
    a = e.copy()
    a[2, 1] = 5
    a[2, 3] = 7
    c = cmp(e, a)
    assert not c.ok and c.mismatches == 2 and c.first_bad_index == 9 and c.first_bad_coords == [2, 1]
    assert c.summary() == "MISMATCH 2/12 elements; first bad index 9 [2,1]: expected 1, got 5; max_abs=6 rel_l2=2.08"  # sqrt((16 + 36) / 12)
    j = c.to_json()
    assert j["expected_at_first_bad"] == 1.0 and j["actual_at_first_bad"] == 5.0


def test_nan_and_inf_rules():
    e = np.array([np.nan, np.inf, -np.inf, 1.0, 2.0], np.float32)
    a = np.array([np.nan, np.inf, np.inf, np.nan, 2.0], np.float32)
    c = cmp(e, a)
    assert c.mismatches == 2 and c.nan_or_inf_mismatches == 2 and c.first_bad_index == 2
    assert c.max_abs_err == 0.0  # errors are over finite pairs only
    j = c.to_json()
    assert j["expected_at_first_bad"] == "-inf" and j["actual_at_first_bad"] == "inf"


def test_poisoned_elements_are_counted_as_unwritten():
    e = np.arange(1, 9, dtype=np.float32)
    a = e.copy()
    a.view(np.uint8).reshape(8, 4)[5:] = 0xFF  # the last three never written (NaN poison)
    c = cmp(e, a)
    assert c.still_poisoned == 3 and c.mismatches == 3
    assert c.summary().endswith("; 3 elements never written (still poisoned)")
    ints = np.arange(1, 5, dtype=np.int32)
    got = ints.copy()
    got.view(np.uint8)[:4] = 0xA5
    ci = cmp(ints, got, atol=0, rtol=0, dtype="int32")
    assert ci.still_poisoned == 1 and ci.mismatches == 1


def test_poison_bytes_match_the_cpp_runner():
    assert compare.poison_byte("float32") == 0xFF and compare.poison_byte("bfloat16") == 0xFF
    assert compare.poison_byte("int8") == 0xA5 and compare.poison_byte("bool") == 0xA5
    for dt in ("float16", "float32", "float64"):
        size = np.dtype(dt).itemsize
        assert np.isnan(np.frombuffer(bytes([0xFF] * size), dtype=dt)[0])
    assert math.isnan(compare.decode(np.array([0xFF, 0xFF], np.uint8), "bfloat16")[0])


def test_bfloat16_and_float16_decode_exactly():
    bf = np.array([1.0, -2.5, 3.140625], np.float32).view(np.uint32) >> 16
    got = compare.decode(bf.astype("<u2").view(np.uint8), "bfloat16")
    assert list(got) == [1.0, -2.5, 3.140625]
    h = np.array([0.5, 65504.0], np.float16)
    assert list(compare.decode(raw(h), "float16")) == [0.5, 65504.0]


def test_large_outputs_compare_in_chunks(monkeypatch):
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 7)
    e = np.linspace(-1, 1, 100, dtype=np.float32)
    a = e.copy()
    a[50] += 1
    a[93] += 2
    whole = np.abs(a.astype(np.float64) - e)
    c = cmp(e, a)
    assert c.mismatches == 2 and c.first_bad_index == 50 and c.max_abs_err == pytest.approx(whole.max())
    assert c.rel_l2_err == pytest.approx(math.sqrt((whole ** 2).sum() / (e.astype(np.float64) ** 2).sum()))


def test_first_changed_element():
    a = np.arange(8, dtype=np.float32)
    b = a.copy()
    assert compare.first_changed_element(raw(a), raw(b), 4) == -1
    b[6] = 0
    assert compare.first_changed_element(raw(a), raw(b), 4) == 6


def test_the_json_fields_are_those_of_compare_cpp():
    text = open(os.path.join(ROOT, "src", "runner", "compare.cpp")).read()
    body = text[text.index("util::Json to_json(const CompareResult& c)"):]
    cpp_fields = re.findall(r'\{"(\w+)",', body)
    assert cpp_fields and list(cmp(np.ones(2, np.float32), np.ones(2, np.float32)).to_json()) == cpp_fields


COMPARE_VECTORS = json.load(open(os.path.join(ROOT, "tests", "data", "compare", "vectors.json"), encoding="utf-8"))


@pytest.mark.parametrize("c", COMPARE_VECTORS["cases"], ids=[c["name"] for c in COMPARE_VECTORS["cases"]])
def test_shared_vectors_every_field_as_compare_cpp(c):
    """The shared vectors (tests/data/compare/vectors.json), which runner/stats_test.cpp's Compare.SharedTestVectors
    checks the C++ comparison against: the same fields, figures and summary line here."""
    e = np.frombuffer(bytes.fromhex(c["expected_hex"]), np.uint8)
    a = np.frombuffer(bytes.fromhex(c["actual_hex"]), np.uint8)
    got = compare.compare(c["dtype"], c["shape"], e, a, c["atol"], c["rtol"]).to_json()
    want = c["result"]
    assert list(got) == list(want)
    for k, v in want.items():
        assert got[k] == (pytest.approx(v, rel=1e-12, abs=1e-300) if isinstance(v, float) else v), k


def test_status_names_are_those_of_outcome_cpp():
    text = open(os.path.join(ROOT, "src", "runner", "outcome.cpp")).read()
    names = re.findall(r'\{RunStatus::k\w+, "(\w+)"', text)
    assert tuple(names) == runresult.STATUSES


def test_timing_method_and_reason_names_are_those_of_timing_method_cpp():
    text = open(os.path.join(ROOT, "src", "runner", "timing_method.cpp")).read()
    methods = re.findall(r'\{TimingMethod::k\w+, "(\w+)"', text)
    reasons = re.findall(r'\{FallbackReason::k\w+, "(\w*)"', text)
    assert set(sampling.METHODS) <= set(methods) and sampling.BEHIND_SLEEP in methods
    assert {sampling.FORCED, sampling.BLOCKER_UNAVAILABLE, sampling.SOLVE_WAITED, sampling.WORK_OUTSIDE} <= set(reasons)
    launch_free = re.findall(r'\{TimingMethod::k\w+, "(\w+)",\s*"[^"]*"(?:\s*"[^"]*")*, true', text)
    assert set(sampling.LAUNCH_EXCLUDED) <= set(launch_free)


def test_the_runner_keeps_no_statistics_of_its_own():
    """One statistics implementation: the C++ side computes `timing` from the samples (runner::interpret)."""
    assert not hasattr(runresult, "timing_json") and not hasattr(runresult, "stability")


def test_exit_codes_follow_the_cpp_child():
    assert runresult.exit_code_for("ok") == 0 and runresult.exit_code_for("wrong_result") == 0
    assert runresult.exit_code_for("load_error") == 4 and runresult.exit_code_for("cuda_error") == 3


# --- the torch backend: the same comparison on torch tensors (the GPU path of the Triton runner) -------------

def _torch_devices():
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return []
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _mixed_case(dtype, n=5000, seed=3):
    """Expected and actual outputs with every kind of element: equal, within tolerance, mismatched, NaN and
    infinities on either side, still poisoned, and (for floats) signed zeros."""
    rng = np.random.default_rng(seed)
    if dtype in ("int8", "int32", "int64", "uint8"):
        e = rng.integers(0, 100, n).astype(dtype)
        a = e.copy()
        a[[5, 70, 4000]] += 1
        ab = raw(a).copy()
        ab[100 * e.itemsize:(100 + 3) * e.itemsize] = compare.POISON_INT
        return raw(e), ab
    if dtype == "bool":
        e = rng.integers(0, 2, n).astype(bool)
        a = e.copy()
        a[[9, 10]] = ~a[[9, 10]]
        return raw(e), raw(a).copy()
    npd = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    e = rng.standard_normal(n).astype(npd)
    a = (e * (1 + rng.uniform(-2e-5, 2e-5, n))).astype(npd)
    a[7] += 0.5
    e[11], a[11] = np.nan, np.nan
    e[12], a[12] = np.inf, np.inf
    e[13], a[13] = -np.inf, np.inf
    e[14], a[14] = 1.0, np.nan
    e[15], a[15] = 0.0, -0.0
    if dtype == "bfloat16":  # the top halves of float32 values are bfloat16 values
        e16, a16 = (raw(e).view("<u4") >> 16).astype("<u2"), (raw(a).view("<u4") >> 16).astype("<u2")
        eb, abytes = raw(e16), raw(a16).copy()
        item = 2
    else:
        eb, abytes, item = raw(e), raw(a).copy(), np.dtype(npd).itemsize
    abytes[3000 * item:3010 * item] = compare.POISON_FLOAT
    return eb, abytes


@pytest.mark.parametrize("device", _torch_devices() or [pytest.param("cpu", marks=pytest.mark.skip("no torch"))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8",
                                   "bool"])
def test_the_torch_backend_gives_the_numpy_result_field_for_field(device, dtype, monkeypatch):
    import torch  # noqa: PLC0415
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 1024)  # several chunks, the first bad one not in the first
    eb, ab = _mixed_case(dtype)
    want = compare.compare(dtype, (50, 100), eb, ab, 1e-4, 1e-4).to_json()
    t = lambda b: torch.from_numpy(np.ascontiguousarray(b)).to(device)  # noqa: E731
    got = compare.compare(dtype, (50, 100), t(eb), t(ab), 1e-4, 1e-4).to_json()
    # Every field exactly, but the relative L2 error: its sums run in another order on torch (last-bit changes).
    assert got.pop("rel_l2_err") == pytest.approx(want.pop("rel_l2_err"), rel=1e-9)
    assert got.pop("summary").split(" rel_l2=")[0] == want.pop("summary").split(" rel_l2=")[0]
    assert {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v} == {}  # names what differs
    assert want["mismatches"] > 0  # the case is not trivially equal
    same = compare.compare(dtype, (50, 100), t(eb), t(eb.copy()), 1e-4, 1e-4)
    assert same.ok and same.bitwise_equal
    changed = ab.copy()
    assert compare.first_changed_element(t(eb), t(changed), 1) == compare.first_changed_element(eb, changed, 1) >= 0
    assert compare.first_changed_element(t(eb), t(eb.copy()), 4) == -1


def test_dtype_table_and_default_tolerances_are_those_of_the_cpp_side():
    """dtypes.py, the harness's dtype table, against src/contract/dtype.cpp (names, order, sizes) and the default
    tolerances against runner/compare.cpp's default_tolerance: a dtype or tolerance changed on one side fails here."""
    from kopt_harness import dtypes  # noqa: PLC0415
    text = open(os.path.join(ROOT, "src", "contract", "dtype.cpp")).read()
    rows = re.findall(r'\{DType::(k\w+), "(\w+)", "\w+", (\d+)\}', text)
    assert [(name, int(size)) for _, name, size in rows] == [(d.name, d.itemsize) for d in dtypes._TABLE]
    enum_of = {name: k for k, name, _ in rows}
    text = open(os.path.join(ROOT, "src", "runner", "compare.cpp")).read()
    body = text[text.index("Tolerance default_tolerance(DType t)"):]
    body = body[:body.index("\n}\n")]
    cases = {k: (float(a), float(r)) for k, a, r in re.findall(r"case DType::(k\w+): return \{([\d.e+-]+), ([\d.e+-]+)\};", body)}
    fallback = tuple(float(x) for x in re.search(r"default: return \{([\d.e+-]+), ([\d.e+-]+)\};", body).groups())
    for d in dtypes._TABLE:
        assert (d.atol, d.rtol) == cases.get(enum_of[d.name], fallback), d.name
