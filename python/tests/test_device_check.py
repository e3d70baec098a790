"""scripts/device/check.sh, the one entry point for the checks on a GPU machine, without a GPU: `--help` lists
every suite, each listed suite is dispatched to something that exists, an unknown suite exits non-zero, and every
shell script under scripts/ parses (`bash -n`)."""

import glob
import json
import os
import re
import subprocess
import tarfile

import pytest
from conftest import PYTHON_DIR

ROOT = os.path.dirname(PYTHON_DIR)
CHECK = os.path.join(ROOT, "scripts", "device", "check.sh")

# The suites check.sh offers; a suite added or dropped changes this list on purpose.
SUITES = [
    "gpu-tests", "gpu-suite", "ncu-captures", "sanitizer", "ceilings", "examples", "resume", "timing", "flushes",
    "softmax-sizes", "call-ms", "triton-overhead", "search-efficiency", "seeds", "sweep-seeds", "kt-live", "peers",
    "plain", "gates", "multi-gpu", "llm", "report", "corpus", "evidence", "corpus-optimize", "corpus-bench",
    "time-to-result", "decisions", "warm-start",
]
WRAPPED = {"sanitizer": "capture_sanitizer.sh", "peers": "peers_check.sh", "llm": "llm_check.sh",
           "report": "report_check.sh"}


def run(*args, cwd=ROOT):
    return subprocess.run(["bash", CHECK, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "OUT": "/nonexistent-check-out"})


def listed(help_text):
    return [m.group(1) for m in re.finditer(r"^  ([a-z-]+) ", help_text, re.M)]


def test_help_lists_every_suite():
    r = run("--help")
    assert r.returncode == 0, r.stderr
    assert listed(r.stdout) == SUITES


def test_every_listed_suite_is_dispatched():
    text = open(CHECK).read()
    for suite in SUITES:
        if suite in WRAPPED:
            assert os.path.isfile(os.path.join(ROOT, "scripts", "device", WRAPPED[suite])), suite
            assert f'{suite}) bash "$HERE/{WRAPPED[suite]}"' in text, suite
        else:
            assert re.search(r"^suite_%s\(\) \{" % suite.replace("-", "_"), text, re.M), suite


@pytest.mark.parametrize("args", [["no-such-suite"], ["check7"], []])
def test_unknown_or_missing_suite_exits_non_zero(args):
    r = run(*args)
    assert r.returncode != 0
    if args:
        assert "unknown suite" in r.stderr and "--help" in r.stderr


@pytest.mark.parametrize("args", [["seeds", "nope"], ["flushes", "nope"], ["timing", "nope"],
                                  ["search-efficiency", "nope"], ["examples", "nope"],
                                  ["corpus-bench", "nope"], ["corpus-bench", "cub_inclusive_sum"],
                                  ["corpus-optimize"], ["corpus-optimize", "nope"],
                                  ["corpus-optimize", "cub_inclusive_sum:soon"]])
def test_bad_arguments_exit_2_before_touching_the_gpu(args, tmp_path):
    r = subprocess.run(["bash", CHECK, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "OUT": str(tmp_path / "out")})
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert not (tmp_path / "runs").exists()


def test_no_numbered_one_off_scripts_are_left():
    assert not glob.glob(os.path.join(ROOT, "scripts", "device", "check[0-9]*.sh"))


@pytest.mark.parametrize("script", sorted(glob.glob(os.path.join(ROOT, "scripts", "**", "*.sh"), recursive=True)),
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_every_script_parses(script):
    r = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_steps_run_directory_is_the_newest_not_the_first_by_name(tmp_path):
    """lib.sh's newest_run (through summ(), and in every device script): on a warm machine runs/NAME keeps an earlier
    call's run, whose name sorts first; the run that counts is the one made last."""
    runs = tmp_path / "runs" / "x" / "kopt_runs"
    for name, text, mtime in (("run_20261207_013051", "an earlier call's", 1_000_000_000),
                              ("run_20261207_013641", "this call's", 2_000_000_000)):
        (runs / name).mkdir(parents=True)
        (runs / name / "summary.md").write_text(text + "\n")
        os.utime(runs / name, (mtime, mtime))
    lib = os.path.join(ROOT, "scripts", "device", "lib.sh")
    r = subprocess.run(["bash", "-c", f"source {lib}; summ x"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "this call's" in r.stdout and "an earlier call's" not in r.stdout, r.stdout
    assert not [line for f in glob.glob(os.path.join(ROOT, "scripts", "device", "*.sh")) for line in open(f)
                if re.search(r"ls -dt? \"?runs/", line) and not line.startswith("newest_run()")], \
        "a run directory found by its own ls, not by lib.sh's newest_run"


def test_a_corpus_kernels_file_dims_and_flags_come_from_lib_sh():
    """lib.sh's corpus_kernel and corpus_dims are the one place the device scripts read a corpus kernel's file, its
    typical dims and its compile flags (check.sh's corpus suites and corpus_bench.sh once had a copy each)."""
    lib = os.path.join(ROOT, "scripts", "device", "lib.sh")
    r = subprocess.run(["bash", "-c", f"source {lib}; corpus_kernel cutlass_rmsnorm; corpus_kernel liger_softmax; "
                        "corpus_dims cutlass_rmsnorm typical; corpus_dims cutlass_rmsnorm flags"],
                       cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    dims = open(os.path.join(ROOT, "examples", "corpus", "cutlass_rmsnorm", "dims.txt")).read()
    typical = re.search(r"^typical: (.*)$", dims, re.M).group(1)
    flags = re.search(r"^flags: (.*)$", dims, re.M).group(1)
    assert r.stdout.splitlines() == ["examples/corpus/cutlass_rmsnorm/kernel.cu", "examples/corpus/liger_softmax/kernel.py",
                                     typical, flags]
    assert not [f"{os.path.basename(f)}: {line.strip()}" for f in glob.glob(os.path.join(ROOT, "scripts", "device", "*.sh"))
                for line in open(f) if re.search(r"s/\^(typical|flags): |kernel\.cu \S*kernel\.py", line)
                and not line.startswith(("corpus_kernel()", "corpus_dims()"))], \
        "a corpus kernel read by a script's own sed or ls, not by lib.sh's corpus_kernel or corpus_dims"


FAKE_KOPT = r"""#!/usr/bin/env bash
# kopt as corpus_bench.sh's run calls it, without a GPU: annotate copies the kernel, optimize leaves a run directory
# with golden data and a state.json (no cases), bench does nothing.
cmd=$1; shift
case "$cmd" in
  annotate) k=$1; shift
    while [ $# -gt 0 ]; do case "$1" in --write) cp "$k" "$2"; shift ;; --json) echo '{"params": []}' >"$2"; shift ;; esac; shift; done ;;
  optimize) while [ $# -gt 0 ]; do [ "$1" = --out-dir ] && d=$2; shift; done
    mkdir -p "$d/kopt_runs/run_1/golden"; echo '{}' >"$d/kopt_runs/run_1/state.json" ;;
esac
exit 0
"""


def _corpus_bench_with_a_fake_kopt(tmp_path, names, **env_extra):
    """corpus_bench.sh's run on a copy of the scripts and of the named corpus kernels, with a kopt that needs no GPU."""
    import shutil
    shutil.copytree(os.path.join(ROOT, "scripts"), tmp_path / "scripts")
    for n in names:
        shutil.copytree(os.path.join(ROOT, "examples", "corpus", n), tmp_path / "examples" / "corpus" / n)
    kopt = tmp_path / "fake_kopt"
    kopt.write_text(FAKE_KOPT)
    kopt.chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "KOPT_BIN": str(kopt), "CB_STEPS": "optimize sweep", "CB_MIN_KERNEL_S": "0",
           "CB_SWEEP_LIMIT_S": "20", **env_extra}
    r = subprocess.run(["bash", str(tmp_path / "scripts" / "device" / "corpus_bench.sh"), "run", *names], cwd=tmp_path,
                       capture_output=True, text=True, timeout=240, env=env)
    return r, out


def test_corpus_bench_runs_a_triton_kernel_first_to_the_end(tmp_path):
    """corpus_bench.sh's run (set -u) once read the CUDA sweep's pack folder after every kernel's sweep: with a Triton
    kernel first it was never set, and the run stopped there (`p: unbound variable`, session 40 call 5), with no table
    and the kernels after it never started. Run on a copy of the scripts with a kopt that needs no GPU: the Triton
    kernel, then a CUDA one, both reach the end."""
    r, out = _corpus_bench_with_a_fake_kopt(tmp_path, ["liger_softmax", "cutlass_rmsnorm"])
    assert "unbound variable" not in r.stderr, r.stderr
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    assert "=== sweep liger_softmax" in r.stdout and "=== optimize cutlass_rmsnorm" in r.stdout, r.stdout
    assert "corpus-bench: " in r.stdout.splitlines()[-1] and (out / "corpus_bench.tgz").is_file()


@pytest.mark.parametrize("budget,limits", [("none", {"liger_softmax": 240, "cutlass_rmsnorm": 150}),
                                           ("40", {"liger_softmax": 160, "cutlass_rmsnorm": 100})])
def test_corpus_bench_caps_kopts_default_optimize_later_than_a_budgeted_one(tmp_path, budget, limits):
    """kopt's default optimize searches to its own stop: fla_softmax's was cut at the old 150 s cap in its held-out
    shapes (session 40). The cap each kernel ran under is in its kernel.json."""
    r, out = _corpus_bench_with_a_fake_kopt(tmp_path, list(limits), CB_TIME_BUDGET_S=budget, CB_DEADLINE_S="2000")
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    with tarfile.open(out / "corpus_bench.tgz") as t:
        got = {n: json.load(t.extractfile(f"corpus_bench/{n}/kernel.json"))["opt_limit_s"] for n in limits}
    assert got == limits
