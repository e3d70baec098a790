"""scripts/perf/corpus_table.py, the corpus benchmark's table (issue 35, item 4), on a small fixture shaped as what
`check.sh corpus-bench` brings back (python/tests/data/corpus_bench: four kernels, one of each case), read from the
folder and from a tgz as the suite packs it."""

import importlib.util
import json
import math
import os
import subprocess
import sys
import tarfile

import pytest
from conftest import PYTHON_DIR

ROOT = os.path.dirname(PYTHON_DIR)
SCRIPT = os.path.join(ROOT, "scripts", "perf", "corpus_table.py")
FIXTURE = os.path.join(PYTHON_DIR, "tests", "data", "corpus_bench")

spec = importlib.util.spec_from_file_location("corpus_table", SCRIPT)
ct = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ct)


def rows_by_name(tmp_path, source):
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, SCRIPT, str(source), "--json", str(out), "--md", str(tmp_path / "t.md")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    return {row["kernel"]: row for row in doc["rows"]}, doc["summary"], (tmp_path / "t.md").read_text()


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """The fixture as the suite packs it: corpus_bench/NAME/... inside corpus_bench.tgz."""
    d = tmp_path_factory.mktemp("packed")
    tgz = d / "corpus_bench.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        t.add(FIXTURE, arcname="corpus_bench")
    return tgz


def test_a_flag_free_champion_is_judged_on_the_sweeps_own_time(tmp_path, packed):
    rows, _, _ = rows_by_name(tmp_path, packed)
    r = rows["rms_a"]
    assert r["champion_basis"] == "sweep"
    assert r["champion_value_ms"] == pytest.approx(0.0198)        # the sweep's time of BLOCK=128, not kopt's 0.0199
    assert r["champion_over_best"] == pytest.approx(1.0)
    assert r["within"] is True
    # Distinct by (params, methods, flags): BLOCK 64, 256, 0 + register_cap, 128 (twice); the wrong one and the
    # baseline do not count.
    assert r["distinct_candidates"] == 4
    # The project's choice is the sweep's default point (BLOCK=0), not kopt bench's 0.0302.
    assert r["project_basis"] == "sweep" and r["project_ms"] == pytest.approx(0.030)
    assert r["speedup"] == pytest.approx(0.030 / 0.0198)
    assert r["kopt_speedup"] == pytest.approx(0.030 / 0.0199)


def test_wall_to_within_is_the_end_of_the_gates_plus_the_search_seconds(tmp_path, packed):
    rows, _, _ = rows_by_name(tmp_path, packed)
    r = rows["rms_a"]
    # No wall.gates_s (a state.json before 2026-12-06): first_candidate_s 33.6 was stamped when the first candidate's
    # measurement ended, its other cases included: i1c1's primary measurement ended at search_s 3.1, its cases took
    # 0.5 s, so the gates ended at 30 (not 33.6 - 3.6, iteration 1's last: that candidate ended later).
    assert r["gates_end_s"] == pytest.approx(30.0)
    assert r["to_within_id"] == "i2c1"
    assert r["to_within_search_s"] == pytest.approx(7.2)
    assert r["to_within_s"] == pytest.approx(37.2)
    assert r["whole_s"] == pytest.approx(50.0)


def test_a_champion_with_a_compiler_flag_is_judged_on_kopts_time(tmp_path, packed):
    rows, _, _ = rows_by_name(tmp_path, packed)
    r = rows["softmax_b"]
    assert r["champion_basis"] == "kopt"
    assert r["champion_over_best"] == pytest.approx(0.095 / 0.086)
    assert r["within"] is False and r.get("to_within_s") is None
    assert r["project_ms"] == pytest.approx(0.100)                 # the default point VEC=8 BLOCK=0


def test_zero_candidates_and_a_baseline_already_best(tmp_path, packed):
    rows, s, md = rows_by_name(tmp_path, packed)
    r = rows["merge_c"]
    assert r["distinct_candidates"] == 0 and "measured zero candidates" in r["notes"]
    assert r["within"] is True and r["to_within_s"] == pytest.approx(35.0)   # the baseline, at the end of the gates
    assert s["zero_candidates"] == ["merge_c"]
    assert "optimize exit 130" in md


def test_a_space_whose_other_points_are_all_wrong_is_not_a_run_with_zero_candidates(tmp_path):
    # flashinfer_online_softmax on the H200 (2026-12-04): KERNEL_BLOCK 256 measured and incorrect, 128 and 64 predicted
    # infeasible by the feasibility model, the sweep finds only the project's 1024 correct: not "zero candidates".
    import shutil
    src = tmp_path / "corpus_bench"
    shutil.copytree(os.path.join(FIXTURE, "merge_c"), src / "merge_c")
    state = json.loads((src / "merge_c" / "state.json").read_text())
    base = [h for h in state["history"] if h["candidate"].get("id") == "baseline"]
    cand = dict(base[0]["candidate"], id="i1c4")
    state["history"] = base + [
        {"candidate": cand, "status": "incorrect", "median_ms": None, "search_s": 1.0, "unwritten_fraction": 0.74},
        {"candidate": dict(cand, id="i1c3"), "status": "incorrect", "median_ms": None, "search_s": 1.0,
         "predicted_infeasible": "predicted infeasible (under-coverage): ..."}]
    (src / "merge_c" / "state.json").write_text(json.dumps(state))
    rows, s, md = rows_by_name(tmp_path, src)
    r = rows["merge_c"]
    assert r["distinct_candidates"] == 0 and r["evaluated"] == 2
    assert r["not_correct"] == 1 and r["predicted_infeasible"] == 1 and r["unwritten"] == 1
    assert "measured zero candidates" not in r["notes"] and s["zero_candidates"] == []
    assert any(n.startswith("no other correct point: 1 measured and not correct, 1 predicted infeasible") for n in r["notes"])
    assert "0 (+ 1 not correct, 1 predicted infeasible)" in md


def test_skipped_kernels_and_the_summary(tmp_path, packed):
    rows, s, md = rows_by_name(tmp_path, packed)
    assert rows["late_d"]["skipped"].startswith("deadline")
    assert s["ran"] == 3 and s["skipped"] == ["late_d"]
    assert (s["within"], s["judged"]) == (2, 3)
    assert s["median_to_within_s"] == pytest.approx((37.2 + 35.0) / 2)
    assert s["median_to_within_or_whole_s"] == pytest.approx(37.2)   # 37.2, 40.0 (not reached: whole), 35.0
    assert s["median_whole_s"] == pytest.approx(50.0)
    assert "not run: deadline" in md and "**2 of 3**" in md and "kopt abc1234" in md
    # Rows in the order the kernels ran (kernel.json started_s).
    assert [ln.split("|")[1].strip().split(" ")[0] for ln in md.splitlines()[2:6]] == ["rms_a", "softmax_b", "merge_c", "late_d"]


def test_the_folder_reads_as_the_tgz_does(tmp_path, packed):
    a, sa, _ = rows_by_name(tmp_path, packed)
    b, sb, _ = rows_by_name(tmp_path, FIXTURE)
    assert sa == sb and a == b


def test_one_line_per_kernel_for_the_log():
    r = subprocess.run([sys.executable, SCRIPT, FIXTURE, "--only", "rms_a", "--lines"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("corpus rms_a: 4 distinct candidates") and "ratio 1.000" in r.stdout
    assert len(r.stdout.splitlines()) == 1


def test_the_end_of_the_gates_kopt_recorded_is_taken_as_it_is():
    r = ct.kernel_row(os.path.join(FIXTURE, "softmax_b"))
    assert r["gates_end_s"] == pytest.approx(27.5)          # wall.gates_s, not first_candidate_s 30 - search_s 2.0


def test_within_is_a_parameter(tmp_path):
    r = ct.kernel_row(os.path.join(FIXTURE, "softmax_b"), within=15.0)
    assert r["within"] is True and r["to_within_search_s"] == pytest.approx(2.0)


def test_missing_files_say_what_is_missing(tmp_path):
    d = tmp_path / "corpus_bench" / "k"
    d.mkdir(parents=True)
    (d / "kernel.json").write_text(json.dumps({"name": "k", "dims": "--n=1"}))
    r = ct.kernel_row(str(d))
    assert r["notes"] == ["no optimize state.json"] and r["sweep_best_ms"] is None


def test_no_kernel_folders_is_an_error(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "no kernel folders" in r.stderr


def test_a_source_that_is_not_there_is_named(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "nope.tgz")], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "nope.tgz: no such file or folder" in r.stderr


def test_the_plot_is_written_when_matplotlib_is_there(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    r = subprocess.run([sys.executable, SCRIPT, FIXTURE, "--plot", str(png)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 1000


def _with_cases(tmp_path, tables):
    """rms_a with kopt's three cases in kernel.json and the sweep at the other two as measurements_CASE.csv (BLOCK ->
    ms; a missing table is left out)."""
    import shutil
    root = tmp_path / "cb"
    shutil.copytree(os.path.join(FIXTURE, "rms_a"), root / "rms_a")
    kj = json.loads((root / "rms_a" / "kernel.json").read_text())
    kj["cases"] = [{"name": "full", "weight": 0.5, "primary": True, "dims": {"M": 8192, "N": 4096}},
                   {"name": "scale_0.75", "weight": 0.3, "primary": False, "dims": {"M": 6144, "N": 3072}},
                   {"name": "scale_0.5", "weight": 0.2, "primary": False, "dims": {"M": 4096, "N": 2048}}]
    (root / "rms_a" / "kernel.json").write_text(json.dumps(kj))
    for case, times in tables.items():
        # The Triton sweep's columns too (plain_sweep_triton.py: the timing method and which run gave the time)
        lines = ["index,BLOCK,status,median_ms,ci95_low_ms,ci95_high_ms,tflops,timing_method,basis"]
        for i, (block, ms) in enumerate(times.items()):
            lines.append(f"{i},{block},ok,{ms},,,,events_behind_sleep,final" if ms else f"{i},{block},wrong_result,,,,,,")
        (root / "rms_a" / f"measurements_{case}.csv").write_text("\n".join(lines) + "\n")
    return root


def test_the_champion_is_held_to_the_best_of_kopts_own_objective_over_the_cases(tmp_path):
    # At the dims alone BLOCK=128 (the champion) is the best; at the smaller cases BLOCK=256 is far faster, so over
    # kopt's weighted objective (0.5/0.3/0.2) BLOCK=256 is the best and the champion is 1.3x off.
    root = _with_cases(tmp_path, {"scale_0.75": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01},
                                  "scale_0.5": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01}})
    rows, s, md = rows_by_name(tmp_path, root)
    r = rows["rms_a"]
    assert r["champion_over_best"] == pytest.approx(1.0)          # at the dims alone
    assert r["within_dims"] is True
    ob = r["objective"]
    assert ob["best_point"] == {"BLOCK": "256"}
    best = math.exp(0.5 * math.log(0.022) + 0.5 * math.log(0.01))
    champ = math.exp(0.5 * math.log(0.0198) + 0.5 * math.log(0.02))
    assert ob["best_ms"] == pytest.approx(best) and ob["champion_ms"] == pytest.approx(champ)
    assert ob["points"] == 4                                      # BLOCK=32 is wrong at the dims
    assert r["within"] is False and s["within"] == 0
    # The wall to within 3% is by the objective too: no history entry was within 3% of BLOCK=256's blend but
    # i1c2 (BLOCK=256) itself, at search_s 3.4 after gates ending at 30.
    assert r["to_within_id"] == "i1c2" and r["to_within_s"] == pytest.approx(33.4)
    assert "objective 1." in md


def test_the_plot_shows_the_ratio_within_was_judged_by(tmp_path):
    # The objective's ratio where the cases were swept (a champion chosen for the blend may be 3.7% off at the dims
    # and 1.2% off by the objective: cutlass_rmsnorm, session 40): the bar must agree with the row's colour.
    root = _with_cases(tmp_path, {"scale_0.75": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01},
                                  "scale_0.5": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01}})
    rows, _, _ = rows_by_name(tmp_path, root)
    r = rows["rms_a"]
    assert ct.judged_ratio(r) == pytest.approx(r["objective"]["champion_over_best"])
    assert ct.judged_ratio(r) > 1.03 and r["champion_over_best"] == pytest.approx(1.0) and r["within"] is False
    plain = {k: v for k, v in r.items() if k != "objective"}
    assert ct.judged_ratio(plain) == pytest.approx(1.0)


def test_without_every_cases_sweep_the_dims_alone_decide(tmp_path):
    root = _with_cases(tmp_path, {"scale_0.75": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01}})
    rows, _, _ = rows_by_name(tmp_path, root)
    r = rows["rms_a"]
    assert "objective" not in r and r["within"] is True
    assert any("no sweep at case scale_0.5" in n for n in r["notes"]), r["notes"]


def test_a_champion_with_a_method_shows_its_parameters_point_on_the_objective(tmp_path):
    root = _with_cases(tmp_path, {"scale_0.75": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01},
                                  "scale_0.5": {0: 0.02, 64: 0.02, 128: 0.02, 256: 0.01}})
    sp = root / "rms_a" / "state.json"
    state = json.loads(sp.read_text())
    state["champion"]["candidate"]["methods"] = ["register_cap"]
    sp.write_text(json.dumps(state))
    rows, _, _ = rows_by_name(tmp_path, root)
    r = rows["rms_a"]
    assert r["champion_basis"] == "kopt" and "champion_over_best" not in r["objective"]
    best = math.exp(0.5 * math.log(0.022) + 0.5 * math.log(0.01))
    bare = math.exp(0.5 * math.log(0.0198) + 0.5 * math.log(0.02))
    assert r["objective"]["params_point_over_best"] == pytest.approx(bare / best)
    assert any("its parameters without its methods: 1.3" in n for n in r["notes"]), r["notes"]


def test_several_sources_give_each_kernel_the_row_of_the_last_call_that_ran_it(tmp_path, packed):
    import shutil
    # A later call: late_d ran (rms_a's files under its name), rms_a was skipped, softmax_b is not in it.
    later = tmp_path / "later" / "corpus_bench"
    shutil.copytree(os.path.join(FIXTURE, "rms_a"), later / "late_d")
    kj = json.loads((later / "late_d" / "kernel.json").read_text())
    kj.update(name="late_d", started_s=5.0)
    (later / "late_d" / "kernel.json").write_text(json.dumps(kj))
    (later / "rms_a").mkdir()
    (later / "rms_a" / "kernel.json").write_text(json.dumps({"name": "rms_a", "skipped": "deadline: 3 s left", "started_s": 9.0}))
    (later / "run.json").write_text(json.dumps({"date": "2026-12-06", "gpu": "NVIDIA H200", "commit": "later12"}))
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, SCRIPT, str(packed), str(later), "--json", str(out)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    rows = {row["kernel"]: row for row in doc["rows"]}
    # The first call's order is kept; late_d now has the later call's run, rms_a keeps the first call's.
    assert [row["kernel"] for row in doc["rows"]] == ["rms_a", "softmax_b", "merge_c", "late_d"]
    assert not rows["late_d"].get("skipped") and rows["late_d"]["to_within_id"] == "i2c1"
    assert not rows["rms_a"].get("skipped") and rows["rms_a"]["to_within_s"] == pytest.approx(37.2)
    assert doc["summary"]["judged"] == 3 + 1
    assert [run["commit"] for run in doc["meta"]["runs"]][-1] == "later12"
    assert "kopt later12" in r.stdout and "kopt abc1234" in r.stdout


def _sweep_with_methods(tmp_path, methods):
    """rms_a whose sweep at the dims says how each point was timed (BLOCK -> timing_method); BLOCK=128 (kopt's
    champion, 0.0199 by kopt) read 0.030 where the sweep timed it with its launch."""
    import shutil
    root = tmp_path / "cb"
    shutil.copytree(os.path.join(FIXTURE, "rms_a"), root / "rms_a")
    times = {0: 0.030, 64: 0.025, 128: 0.030, 256: 0.022}
    lines = ["index,BLOCK,status,median_ms,timing_method,basis"]
    for i, (block, ms) in enumerate(times.items()):
        lines.append(f"{i},{block},ok,{ms},{methods[block]},final")
    (root / "rms_a" / "measurements.csv").write_text("\n".join(lines) + "\n")
    return root


def test_a_point_the_sweep_timed_with_its_launch_is_not_compared_with_those_timed_without(tmp_path):
    # s43: the sweep timed liger_dyt's own configuration with a device-wide synchronisation (0.267 ms, its Python
    # launch included) and the others behind the sleep (0.181-0.184): the table read kopt's champion, that
    # configuration, at 1.47 of the best. Such a point is left out; kopt's own median stands in for the champion.
    free, sync = "events_behind_sleep", "events_with_device_sync_before_stop"
    root = _sweep_with_methods(tmp_path, {0: free, 64: free, 128: sync, 256: free})
    rows, _, md = rows_by_name(tmp_path, root)
    r = rows["rms_a"]
    assert r["sweep_best_ms"] == pytest.approx(0.022) and r["sweep_ok"] == 4  # correct, if not compared
    assert r["champion_basis"] == "kopt" and r["champion_value_ms"] == pytest.approx(0.0199)
    assert r["champion_over_best"] == pytest.approx(0.0199 / 0.022) and r["within"] is True
    assert any("BLOCK=128 with its launch (events_with_device_sync_before_stop)" in n for n in r["notes"]), r["notes"]
    assert "with its launch" in md
    # Timed so, it would have been compared: 0.030 / 0.022, not within 3%
    root = _sweep_with_methods(tmp_path / "all", {0: free, 64: free, 128: free, 256: free})
    rows, _, _ = rows_by_name(tmp_path / "all", root)
    assert rows["rms_a"]["champion_basis"] == "sweep" and rows["rms_a"]["within"] is False


def test_a_sweep_timed_with_the_launch_throughout_is_compared_as_it_is(tmp_path):
    # No point timed without the launch (a kernel whose every configuration needs the fallback): like for like.
    sync = "events_default_stream"
    root = _sweep_with_methods(tmp_path, {0: sync, 64: sync, 128: sync, 256: sync})
    rows, _, _ = rows_by_name(tmp_path, root)
    r = rows["rms_a"]
    assert r["sweep_ok"] == 4 and r["champion_basis"] == "sweep" and r["champion_value_ms"] == pytest.approx(0.030)
    assert not any("with its launch" in n for n in r["notes"])
