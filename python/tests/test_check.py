"""`python3 -m kopt_harness check`: the contract without a GPU (kopt check, and every kernel command first)."""

import json

import pytest
from conftest import VECADD

GOOD = """
import numpy as np
shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}
def reference(*, a, b, c, n):
    c[:] = a + b
"""


def check(harness, ref_text, dims='{"n": 16}', *extra):
    return harness.cli("check", "--ref", harness.ref(ref_text), "--signature", harness.sig_file(VECADD),
                       "--dims", dims, *extra)


def test_a_good_contract_passes_statically_and_on_the_cpu(harness):
    r = check(harness, GOOD)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["status"] == "ok" and out["reference"] == "not run" and out["unused_dims"] == []
    ran = json.loads(check(harness, GOOD, '{"n": 16}', "--run").stdout.splitlines()[-1])
    assert ran["reference"] == "ran" and ran["device"] == "cpu" and ran["buffers"] == ["a", "b", "c"]


@pytest.mark.parametrize("text,dims,needle", [
    (GOOD, '{"N": 16}', "give --n=N"),                                   # a wrong dimension name
    ("def reference(:\n    pass\n", '{"n": 16}', "SyntaxError"),          # a syntax error in ref.py
    ("x = 1\n", '{"n": 16}', "defines no function reference"),
    ("def setup(*, seed, M):\n    return {}\ndef reference(**kw):\n    pass\n", '{"n": 16}', "'M'"),
    (GOOD.replace("c, n):", "c, n, alpha):"), '{"n": 16}', "reference() requires 'alpha'"),
])
def test_contract_errors_exit_4_naming_what_to_fix(harness, text, dims, needle):
    r = check(harness, text, dims)
    assert r.returncode == 4
    assert needle in r.stderr, r.stderr


def test_a_shape_error_shows_only_when_the_reference_runs(harness):
    bad = GOOD.replace("c[:] = a + b", "c[:] = a[: n // 2] + b")
    assert check(harness, bad).returncode == 0
    r = check(harness, bad, '{"n": 16}', "--run")
    assert r.returncode == 4 and "could not be broadcast" in r.stderr, r.stderr


def test_an_unused_dimension_is_a_warning_and_a_missing_module_is_reported_not_failed(harness):
    out = json.loads(check(harness, GOOD, '{"n": 16, "m": 2}').stdout.splitlines()[-1])
    assert out["unused_dims"] == ["m"] and "--m" in out["warnings"][0]
    r = check(harness, "import no_such_module_anywhere\n" + GOOD)
    assert r.returncode == 0, r.stderr
    missing = json.loads(r.stdout.splitlines()[-1])
    assert missing["status"] == "module_missing" and missing["module"] == "no_such_module_anywhere"


def test_a_reference_too_large_for_the_machine_runs_at_scaled_dims_and_says_so(harness, monkeypatch):
    # Issue 37: the CPU reference at a capped size when the dims are large, never an OOM kill. 1 GB here: the
    # buffers (3 x 4 B x n) may take a quarter of it, so n = 2^31 - 1 (24 GB) runs at n / 128.
    monkeypatch.setenv("KOPT_CHECK_MAX_GB", "1")
    r = check(harness, GOOD, '{"n": 2147483647}', "--run")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["reference"] == "ran" and out["scaled_dims"] == {"n": 16777215}, out
    assert out["given_bytes"] == 3 * 4 * 2147483647 and out["limit_bytes"] == 1 << 30
    # A 2-D shape keeps its relation: every dim that sizes a buffer is divided by the same factor, tile multiples kept.
    two_d = ('import numpy as np\nshapes = {"a": ("M", "K"), "b": ("M", "K"), "c": ("M", "K")}\n'
             "def reference(*, a, b, c, n):\n    c[:] = a + b\n")
    r = check(harness, two_d, '{"M": 65536, "K": 32768, "n": 5}', "--run")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["scaled_dims"] == {"M": 4096, "K": 2048}, out  # a factor of 16; n sizes no buffer and keeps its value
    ok = json.loads(check(harness, GOOD, '{"n": 1024}', "--run").stdout.splitlines()[-1])
    assert "scaled_dims" not in ok


def test_scale_dims_keeps_alignment_and_a_floor():
    from kopt_harness.check import scale_dims
    assert scale_dims({"M": 4096, "N": 4096, "it": 3}, ["M", "N"], 8) == {"M": 512, "N": 512, "it": 3}
    assert scale_dims({"M": 4096}, ["M"], 64) == {"M": 256}  # kept a multiple of 256, its alignment
    assert scale_dims({"n": 2147483647}, ["n"], 128) == {"n": 16777215}
    assert scale_dims({"n": 3000}, ["n"], 4) == {"n": 744}  # 3000 = 8 x 375: stays a multiple of 8


def test_a_reference_no_scaling_can_shrink_is_an_error_naming_the_dims_not_a_kill(harness, monkeypatch):
    monkeypatch.setenv("KOPT_CHECK_MAX_GB", "1")
    fixed = ('import numpy as np\nshapes = {"a": (1073741824,), "b": (1073741824,), "c": (1073741824,)}\n'
             "def reference(*, a, b, c, n):\n    c[:] = a + b\n")
    r = check(harness, fixed, '{"n": 16}', "--run")
    assert r.returncode == 4, r.stderr
    assert "needs more memory than kopt check lets it use on this machine (1.0 GB" in r.stderr, r.stderr
    assert "no dimension sizes its buffers" in r.stderr and "--n=16" in r.stderr and "--static" in r.stderr
