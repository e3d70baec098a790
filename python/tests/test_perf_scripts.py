"""scripts/perf: enumerating a kernel's declared space (kopt_space.py) and the search-efficiency report."""

import csv
import importlib.util
import os

import pytest
from conftest import PYTHON_DIR

PERF = os.path.join(os.path.dirname(PYTHON_DIR), "scripts", "perf")
SGEMM = os.path.join(os.path.dirname(PYTHON_DIR), "examples", "sgemm_tunable", "kernel.cu")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(PERF, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


kopt_space = load("kopt_space")


@pytest.mark.parametrize("expr,want", [
    ("-7 / 2", -3), ("-7 % 2", -1), ("7 / -2", -3), ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9),
    ("!0 && (1 || 0)", 1), ("2 < 3 == 1", 1), ("1 || 1 / 0", 1), ("0 && 1 / 0", 0), ("-(2 - 5)", 3),
])
def test_constraints_follow_c_semantics(expr, want):
    assert kopt_space.Expr(expr).eval({}) == want


def test_division_by_zero_makes_a_configuration_invalid():
    dims = [("A", [0, 1, 2], 1)]
    configs = list(kopt_space.enumerate_space(dims, [kopt_space.Expr("4 / A >= 2")]))
    assert configs == [{"A": 1}, {"A": 2}]


def test_annotations_and_a_narrowed_kernel(tmp_path):
    text = open(SGEMM).read()
    dims, constraints = kopt_space.parse_annotations(text)
    assert [d[0] for d in dims] == ["BM", "BN", "BK", "TM", "TN", "STAGES", "KOPT_VECTORIZED_ACCESS",
                                    "KOPT_CP_ASYNC_PIPELINE", "KOPT_SMEM_PADDING"]
    everything = list(kopt_space.enumerate_space(dims, constraints))
    assert all((c["BM"] // c["TM"]) * (c["BN"] // c["TN"]) % 32 == 0 for c in everything)
    fixed = {"TM": 8, "TN": 8, "BM": 128}
    subset = list(kopt_space.enumerate_space(dims, constraints, fixed))
    assert subset == [c for c in everything if all(c[k] == v for k, v in fixed.items())]
    narrowed = kopt_space.narrowed(text, fixed)
    assert "// @kopt param TM values=8 default=8\n" in narrowed
    assert "// @kopt param BN values=64,128 default=64\n" in narrowed
    dims2, constraints2 = kopt_space.parse_annotations(narrowed)
    assert list(kopt_space.enumerate_space(dims2, constraints2)) == subset
    assert narrowed.replace("values=8 default=8", "").count("\n") == text.count("\n")


def test_fixing_a_guard_is_refused(capsys):
    with pytest.raises(SystemExit):
        kopt_space.main([SGEMM, "--fix", "KOPT_SMEM_PADDING=1"])


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_search_efficiency_report(tmp_path):
    se = load("search_efficiency")
    rows, times = [], {(1, 0): 1.10, (1, 1): 0.80, (2, 0): 1.20, (2, 1): 0.805, (3, 0): 1.30, (3, 1): None}
    for i, ((a, p), ms) in enumerate(times.items()):
        rows.append({"index": i, "A": a, "KOPT_SMEM_PADDING": p, "status": "ok" if ms else "wrong_result",
                     "median_ms": ms or "", "ci95_low_ms": "", "ci95_high_ms": "", "tflops": ""})
    write_csv(tmp_path / "m.csv", rows)
    dims, configs = se.read_measurements(tmp_path / "m.csv")
    evaluated = [se.parse_config_line(s) for s in
                 ["-DA=2 -DKOPT_SMEM_PADDING=0", "A=2 KOPT_SMEM_PADDING=1 EXTRA=3", "A=2 KOPT_SMEM_PADDING=1",
                  "A=1 KOPT_SMEM_PADDING=1"]]
    text = se.report(dims, configs, evaluated, within=(1,), default={"A": 2, "KOPT_SMEM_PADDING": 0})
    assert "configurations: 6 (5 ok, 1 failed or wrong)" in text
    assert "true best: 0.8000 ms  A=1 KOPT_SMEM_PADDING=1" in text
    assert "default: 1.2000 ms  A=2 KOPT_SMEM_PADDING=0  (the best is 1.50x faster)" in text
    assert "the best                      1                              3.5" in text  # (6 + 1) / (1 + 1)
    assert "within 1% of the best         2                              2.3" in text  # 0.805 <= 0.808
    assert "  the best               evaluation 4" in text
    assert "  within 1% of the best  evaluation 3" in text
    assert "1 evaluation(s) outside the measured space" in text
    assert se.random_search_expectation(100, 0) == 101
