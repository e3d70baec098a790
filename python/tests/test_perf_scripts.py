"""scripts/perf: enumerating a kernel's declared space (kopt_space.py), the search-efficiency report, the chunked
measurement (measure_space.py) and search_efficiency.sh end to end with the GPU parts faked."""

import csv
import importlib.util
import json
import os
import subprocess

import pytest
from conftest import PYTHON_DIR, built_kopt

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


# --- measure_space.py: timing compiled configurations in chunks with the paired runner ----------------------

FAKE_KOPT = r'''#!/usr/bin/env python3
# A stand-in for `kopt __runner --mode paired`: libraries named *wrong* fail their check, *illegal* break the
# context (a result naming failed_lib), *segv* kill the process, *hang* sleep; the others get samples 1..R scaled
# by the number in their name ("lib7" -> 7 ms median).
import json, os, re, signal, sys, time
a = sys.argv[1:]
assert a[0] == "__runner" and a[a.index("--mode") + 1] == "paired"
libs = [a[i + 1] for i, x in enumerate(a) if x == "--lib"]
out, rounds = a[a.index("--out") + 1], int(a[a.index("--rounds") + 1])
with open(os.environ["FAKE_KOPT_LOG"], "a") as f:
    f.write(" ".join(os.path.basename(l)[:-3] for l in libs) + "\n")
def write(j):
    j["meta"] = {"kind": "runner_result"}
    json.dump(j, open(out, "w"))
for l in libs:  # checked in order, like the runner
    if "segv" in l:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "hang" in l:
        time.sleep(60)
    if "illegal" in l:
        write({"status": "cuda_error", "message": l + ": CUDA_ERROR_ILLEGAL_ADDRESS", "mode": "paired", "failed_lib": l})
        sys.exit(3)
if os.environ.get("FAKE_KOPT_GOLDEN_BROKEN"):
    write({"status": "load_error", "message": "golden seed 0 lacks in.A", "mode": "paired"})
    sys.exit(4)
entries = []
for l in libs:
    if "wrong" in l:
        entries.append({"lib": l, "status": "wrong_result", "message": "output C: first bad index 3", "check": {},
                        "samples_ms": []})
        continue
    ms = float(re.search(r"(\d+)", os.path.basename(l)).group(1))
    s = [ms * (1 + 0.01 * (k - rounds // 2)) for k in range(rounds)]
    entries.append({"lib": l, "status": "ok", "message": "", "check": {}, "samples_ms": s,
                    "timing": {"samples": rounds, "median_ms": ms, "ci95_low_ms": ms * 0.99, "ci95_high_ms": ms * 1.01}})
first = next((e for e in entries if e["status"] != "ok"), None)
write({"status": first["status"] if first else "ok", "message": "", "mode": "paired", "rounds": rounds, "libs": entries})
'''


def space_fixture(tmp_path, libs, monkeypatch):
    """configs.txt with one param A = 0..n-1, compiled/<i>.json naming fake libraries (None: compile failed)."""
    ms = load("measure_space")
    kopt = tmp_path / "kopt"
    kopt.write_text(FAKE_KOPT)
    kopt.chmod(0o755)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_KOPT_LOG", str(log))
    (tmp_path / "configs.txt").write_text("".join(f"-DA={i} -DKOPT_X={i % 2}\n" for i in range(len(libs))))
    comp = tmp_path / "compiled"
    comp.mkdir()
    for i, lib in enumerate(libs):
        if lib is not None:
            (comp / f"{i}.json").write_text(json.dumps({"library": f"/libs/{lib}.so", "compile": {
                "status": "ok", "compile_ms": 100.0 + i, "cache_hit": i == 3}}))
    args = ["--kopt", str(kopt), "--golden", str(tmp_path / "golden"), "--configs", str(tmp_path / "configs.txt"),
            "--compiled", str(comp), "--out", str(tmp_path / "out"), "--size", "1000", "--rounds", "5"]
    return ms, args, log


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_measure_space_writes_the_table_from_paired_results(tmp_path, monkeypatch):
    libs = ["lib4", "lib2_wrong", None, "lib8", "lib1", "lib3"]
    ms, args, log = space_fixture(tmp_path, libs, monkeypatch)
    assert ms.main(args + ["--chunk", "4"]) == 0
    rows = read_rows(tmp_path / "out" / "measurements.csv")
    assert list(rows[0]) == ["index", "A", "KOPT_X", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "tflops"]
    assert [r["status"] for r in rows] == ["ok", "wrong_result", "compile_failed", "ok", "ok", "ok"]
    assert [r["A"] for r in rows] == ["0", "1", "2", "3", "4", "5"] and rows[3]["KOPT_X"] == "1"
    assert float(rows[0]["median_ms"]) == 4.0 and float(rows[0]["ci95_low_ms"]) == pytest.approx(3.96)
    assert rows[1]["median_ms"] == "" and rows[2]["tflops"] == ""
    assert float(rows[4]["tflops"]) == pytest.approx(2 * 1000 ** 3 / 1e-3 / 1e12)  # 1 ms at S = 1000: 2 TFLOP/s
    # Two processes of at most 4 libraries; the configuration that did not compile was never passed.
    assert log.read_text().splitlines() == ["lib4 lib2_wrong lib8 lib1", "lib3"]
    failures = (tmp_path / "out" / "failures.txt").read_text().splitlines()
    assert failures == ["1\twrong_result\toutput C: first bad index 3", "2\tcompile_failed\t"]
    # What each configuration cost: its share of its runner process's wall; none for the one never measured.
    costs = read_rows(tmp_path / "out" / "costs.csv")
    assert [c["index"] for c in costs] == ["0", "1", "2", "3", "4", "5"]
    assert costs[2]["measure_ms"] == "" and all(float(costs[i]["measure_ms"]) > 0 for i in (0, 1, 3, 4, 5))
    assert costs[0]["measure_ms"] == costs[1]["measure_ms"]  # the same process of 4, shared evenly
    assert [c["compile_ms"] for c in costs] == ["100.0", "101.0", "", "103.0", "104.0", "105.0"]
    assert [c["compile_cache_hit"] for c in costs] == ["0", "0", "", "1", "0", "0"]
    # The table is what the report reads.
    se = load("search_efficiency")
    dims, configs = se.read_measurements(tmp_path / "out" / "measurements.csv")
    assert dims == ["A", "KOPT_X"] and min(c["ms"] for c in configs) == 1.0


def test_measure_space_isolates_what_kills_a_chunk(tmp_path, monkeypatch):
    libs = ["lib5", "lib6_illegal", "lib7", "lib9_segv", "lib2", "lib3", "lib4", "lib8"]
    ms, args, log = space_fixture(tmp_path, libs, monkeypatch)
    assert ms.main(args + ["--chunk", "8"]) == 0
    rows = read_rows(tmp_path / "out" / "measurements.csv")
    assert [r["status"] for r in rows] == ["ok", "cuda_error", "ok", "crashed", "ok", "ok", "ok", "ok"]
    assert [float(r["median_ms"]) for r in rows if r["status"] == "ok"] == [5, 7, 2, 3, 4, 8]
    calls = log.read_text().splitlines()
    # The named library is dropped and the rest runs again; the crash without a result is split in halves.
    assert calls == ["lib5 lib6_illegal lib7 lib9_segv lib2 lib3 lib4 lib8",  # lib6 named: dropped
                     "lib5 lib7 lib9_segv lib2 lib3 lib4 lib8",  # dies without a result: halves
                     "lib5 lib7 lib9_segv", "lib5", "lib7 lib9_segv", "lib7", "lib9_segv",
                     "lib2 lib3 lib4 lib8"]
    assert "cuda_error" in (tmp_path / "out" / "failures.txt").read_text()


def test_measure_space_stops_on_a_failure_no_library_explains(tmp_path, monkeypatch, capsys):
    ms, args, log = space_fixture(tmp_path, ["lib1", "lib2", "lib3"], monkeypatch)
    monkeypatch.setenv("FAKE_KOPT_GOLDEN_BROKEN", "1")
    assert ms.main(args + ["--chunk", "2"]) == 1
    assert "golden seed 0 lacks in.A" in capsys.readouterr().err
    assert len(log.read_text().splitlines()) == 1  # not retried chunk after chunk
    assert not (tmp_path / "out" / "measurements.csv").exists()


def test_measure_space_times_out_a_hanging_library(tmp_path, monkeypatch):
    ms, args, log = space_fixture(tmp_path, ["lib1", "lib2_hang"], monkeypatch)
    runs = []
    real = ms.run_runner
    monkeypatch.setattr(ms, "run_runner", lambda *a: runs.append(a) or real(*a[:-1], 2.0))  # a 2 s timeout
    assert ms.main(args) == 0
    rows = read_rows(tmp_path / "out" / "measurements.csv")
    assert [r["status"] for r in rows] == ["ok", "timed_out"]
    assert len(runs) == 3  # the pair, then each alone


# --- search_efficiency.sh end to end, with the GPU parts faked -------------------------------------------

FAKE_GPU_KOPT = r'''#!/usr/bin/env python3
# kopt for search_efficiency.sh without a GPU: `sass --compile-only` names a library after the defines,
# `bench` writes a golden directory, `__runner --mode paired` times each library by a formula of its defines
# (KOPT_SMEM_PADDING=1 with STAGES=3 is "wrong"); everything else is the real kopt.
import json, os, re, sys
a = sys.argv[1:]
def arg(name):
    return a[a.index(name) + 1]
if a[0] == "sass":
    assert "--compile-only" in a
    defines = [w[2:] for w in a if w.startswith("-D")]
    lib = "/fake/" + "_".join(d.replace("=", "") for d in defines) + ".so"
    json.dump({"library": lib, "compile": {"status": "ok"}}, open(arg("--json"), "w"))
    print("library: " + lib)
elif a[0] == "bench":
    g = os.path.join(arg("--out-dir"), "kopt_runs", "bench_1", "golden")
    os.makedirs(g)
    json.dump({"seeds": [0]}, open(os.path.join(g, "manifest.json"), "w"))
    print("  kernel     median 9.0000 ms  (fake)")
elif a[0] == "__runner":
    libs = [a[i + 1] for i, x in enumerate(a) if x == "--lib"]
    entries = []
    for lib in libs:
        v = {k: int(n) for k, n in re.findall(r"([A-Z_]+?)(\d+)(?:_|\.so)", os.path.basename(lib))}
        if v["KOPT_SMEM_PADDING"] and v["STAGES"] == 3:
            entries.append({"lib": lib, "status": "wrong_result", "message": "output C: first bad index 0",
                            "check": {}, "samples_ms": []})
            continue
        ms = 4.0 + 1.0 * (v["STAGES"] == 2) - 0.5 * v["KOPT_VECTORIZED_ACCESS"] - 0.25 * v["KOPT_CP_ASYNC_PIPELINE"]
        entries.append({"lib": lib, "status": "ok", "message": "", "check": {}, "samples_ms": [ms] * 5,
                        "timing": {"samples": 5, "median_ms": ms, "ci95_low_ms": ms, "ci95_high_ms": ms}})
    json.dump({"status": "ok", "message": "", "rounds": 5, "libs": entries, "meta": {}}, open(arg("--out"), "w"))
else:
    os.execv(os.environ["REAL_KOPT"], [os.environ["REAL_KOPT"]] + a)
'''


def test_search_efficiency_sh_end_to_end_with_a_fake_gpu(tmp_path):
    kopt = built_kopt()
    if not kopt:
        pytest.skip("no kopt binary (build/kopt)")
    fake = tmp_path / "kopt"
    fake.write_text(FAKE_GPU_KOPT)
    fake.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text('#!/bin/sh\ncase "$1" in -L) echo "GPU 0: Fake H200 (UUID: GPU-0)";; *) echo "Fake H200, 0.0";; esac\n')
    smi.chmod(0o755)
    env = dict(os.environ, KOPT_BIN=str(fake), REAL_KOPT=kopt, PATH=f"{bin_dir}:{os.environ['PATH']}")
    script = os.path.join(PERF, "search_efficiency.sh")
    fix = ["--fix", "BM=128", "--fix", "BN=128", "--fix", "BK=8", "--fix", "TM=8", "--fix", "TN=8"]
    r = subprocess.run(["bash", script, *fix, "--size", "256", "--runs", "5", "--chunk", "5", "--jobs", "2",
                        "--out", str(tmp_path / "se")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "se"
    configs = (out / "configs.txt").read_text().splitlines()
    rows = read_rows(out / "measurements.csv")
    assert len(rows) == len(configs) >= 8
    for line, row in zip(configs, rows):
        want = {k[2:]: v for k, v in (w.split("=") for w in line.split())}
        assert {k: row[k] for k in want} == want
        wrong = want["KOPT_SMEM_PADDING"] == "1" and want["STAGES"] == "3"
        assert row["status"] == ("wrong_result" if wrong else "ok")
    best = min(float(r_["median_ms"]) for r_ in rows if r_["status"] == "ok")
    assert best == 3.25  # STAGES=3, vectorized and cp.async on
    report = (out / "report.txt").read_text()
    assert "true best: 3.2500 ms" in report
    assert "== replay of kopt's search, policy loop" in report and "== replay of kopt's search, policy free" in report
    assert "command: scripts/perf/search_efficiency.sh --fix BM=128" in report and "stages: compile" in report
    assert "gpu: Fake H200" in report
    replay = json.loads((out / "replay_free.json").read_text())
    assert replay["summary"]["space_size"] == len(configs) and len(replay["runs"]) == 5


batch_model = load("batch_model")


def test_batch_model_charges_each_completed_iteration_its_fixed_cost():
    f = batch_model.seconds_to_hit
    assert f(None, 8, 2.0, 22.0) == float("inf")
    assert f(1, 8, 2.0, 22.0) == 0.0          # the baseline
    assert f(2, 8, 2.0, 22.0) == 2.0          # the first candidate
    assert f(9, 8, 2.0, 22.0) == 16.0         # the eighth: the first batch, no fixed cost yet
    assert f(10, 8, 2.0, 22.0) == 16.0 + 22.0 + 2.0  # the first of the second batch pays the first's selection
    assert f(10, 16, 2.0, 22.0) == 18.0       # with K = 16 it is still in the first batch


def test_batch_model_reports_a_share_per_k(tmp_path, capsys):
    # A fake kopt whose replay says: seed 1 hit at evaluation 10, seed 2 never.
    fake = tmp_path / "kopt"
    fake.write_text("#!/usr/bin/env python3\nimport json, sys\na = sys.argv\n"
                    "json.dump({'runs': [{'hit_evaluation': 10}, {'hit_evaluation': None}]}, open(a[a.index('--json') + 1], 'w'))\n")
    fake.chmod(0o755)
    rc = batch_model.main(["--kopt", str(fake), "--kernel", "k.cu", "--table", "t.csv", "--per-candidate", "2",
                           "--per-iteration", "22", "--budget", "30", "--k", "8,16"])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("K  8: 0.00 of 2 seeds")  # 40 s > 30 s
    assert out[1].startswith("K 16: 0.50 of 2 seeds")  # 18 s


ttr_summary = load("ttr_summary")


def test_ttr_summary_reads_the_first_evaluation_within_3_percent_and_the_whole_wall_to_it(tmp_path, capsys):
    state = {"wall": {"whole_s": 47.2, "gates_s": 11.3, "first_candidate_s": 13.1, "champion_s": None},
             "phase_seconds": {"gates": 7.71, "measure": 23.2}, "stop_reason": "interrupted", "iterations_done": 3,
             "history": [{"candidate": {"id": "baseline"}, "status": "ok", "median_ms": 5.18, "search_s": 0.0},
                         {"candidate": {"id": "i1c1"}, "status": "ok", "median_ms": 3.2, "search_s": 4.0},
                         {"candidate": {"id": "i1c2"}, "status": "wrong_result", "median_ms": 3.0, "search_s": 5.0},
                         {"candidate": {"id": "i2c1"}, "status": "ok", "median_ms": 3.1, "search_s": 13.73},
                         {"candidate": {"id": "i2c2"}, "status": "ok", "median_ms": 3.05, "search_s": 20.0}]}
    p = tmp_path / "state.json"
    p.write_text(json.dumps(state))
    assert ttr_summary.main([str(p), "--name", "sg_s1", "--best", "3.018464"]) == 0
    out = capsys.readouterr().out
    # 3.1 <= 1.03 x 3.018464 = 3.109; the wrong result at 3.0 does not count; the champion wall None is left out
    assert "evaluations 4; within 3% of 3.018464 ms: at search second 13.7 -> whole 25.0 s" in out
    assert out.startswith("sg_s1: wall {'whole_s': 47.2, 'gates_s': 11.3, 'first_candidate_s': 13.1} phases {'gates': 7.7")
    assert "stop interrupted iterations 3" in out
    assert "not reached" in ttr_summary.line(state, "x", best_ms=2.0)
    assert "evaluations" not in ttr_summary.line(state, "x")
    # Without a sweep's best: what the run measured, and its champion against the baseline
    assert "measured" not in ttr_summary.line(state, "x", best_ms=3.0)
    state["champion"] = {"candidate": {"id": "i2c2"}, "median_ms": 3.05}
    assert ttr_summary.line(state, "cub").endswith(
        "; measured 4 candidate(s), 3 correct; champion i2c2 at 3.05 ms, 1.698x the baseline's 5.18 ms")
    assert ttr_summary.line({"history": []}, "none").endswith("; measured 0 candidate(s), 0 correct; champion None")


def test_ttr_summary_says_when_a_state_json_is_unreadable(tmp_path, capsys):
    assert ttr_summary.main([str(tmp_path / "missing.json"), "--name", "va"]) == 1
    assert capsys.readouterr().out.startswith("va: no readable state.json")
