"""scripts/device/plain_sweep_triton.py (the exhaustive sweep of a derived Triton space) with the harness faked:
the cross product of the derived values, the chunks, the split of a failing chunk down to the configuration that
breaks it, and measurements.csv."""

import csv
import importlib.util
import json
import os
import sys

from conftest import PYTHON_DIR

SCRIPT = os.path.join(os.path.dirname(PYTHON_DIR), "scripts", "device", "plain_sweep_triton.py")


def load():
    spec = importlib.util.spec_from_file_location("plain_sweep_triton", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BLOCK_WARPS = {"params": [{"name": "BLOCK", "origin": "BLOCK", "kind": "constexpr", "values": [256, 512, 1024]},
                          {"name": "num_warps", "origin": "num_warps", "kind": "num_warps", "values": [4, 8]}]}


def sweep(mod, tmp_path, monkeypatch, derived, fake_chunk, *args, golden="g"):
    """plain_sweep_triton's main over `derived` with the harness faked by `fake_chunk`; returns its output folder."""
    (tmp_path / "d.json").write_text(json.dumps(derived))
    monkeypatch.setattr(mod, "run_chunk", fake_chunk)
    monkeypatch.delenv("KOPT_TRITON_PRELOAD", raising=False)
    out = tmp_path / "sweep"
    monkeypatch.setattr(sys, "argv", ["plain_sweep_triton.py", "--kernel", "k.py", "--derivation", str(tmp_path / "d.json"),
                                      "--golden", str(golden), "--out", str(out), *args])
    mod.main()
    return out


def test_sweep_splits_a_failing_chunk_and_writes_the_table(tmp_path, monkeypatch):
    mod = load()
    calls = []

    def fake_chunk(a, configs, tag, mode="paired"):
        if mode == "check":  # the first configuration checked: the installed modules its kernel's import loaded
            assert configs == [{"BLOCK": 256, "num_warps": 4}]
            return {"status": "ok", "installed_imports": ["xml", "xml.dom"]}
        calls.append(len(configs))
        # BLOCK=1024 with 4 warps is wrong: a chunk holding it fails as a whole, as the harness's paired mode does,
        # naming it; BLOCK=512 with 8 warps crashes its process, which names nothing.
        for k, c in enumerate(configs):
            if c == {"BLOCK": 1024, "num_warps": 4}:
                return {"status": "incorrect", "message": f"configuration {k} {json.dumps(c)}: output y: mismatches"}
        if {"BLOCK": 512, "num_warps": 8} in configs:
            return {"status": "crashed", "message": "Segmentation fault"}
        return {"status": "ok", "timing_method": "events_behind_sleep",
                "libs": [{"samples_ms": [c["BLOCK"] / 1000 / c["num_warps"]] * 3} for c in configs]}

    out = sweep(mod, tmp_path, monkeypatch, BLOCK_WARPS, fake_chunk, "--chunk", "6")
    rows = list(csv.DictReader(open(out / "measurements.csv")))
    assert [(r["BLOCK"], r["num_warps"]) for r in rows] == [("256", "4"), ("256", "8"), ("512", "4"), ("512", "8"),
                                                           ("1024", "4"), ("1024", "8")]
    status = {(r["BLOCK"], r["num_warps"]): r["status"] for r in rows}
    assert status[("1024", "4")] == "incorrect" and status[("512", "8")] == "crashed"
    assert sum(1 for s in status.values() if s == "ok") == 4
    assert float(rows[1]["median_ms"]) == 256 / 1000 / 8
    # The whole chunk (6); without the named one (5); the crash, which names nothing, split in halves (2 and 3, the
    # 3 into 1 and 2, the 2 into 1 and 1); then the 4 fastest and the project's point (no default here: none) again.
    assert calls == [6, 5, 2, 3, 1, 2, 1, 1, 4]
    assert {r["basis"] for r in rows if r["status"] == "ok"} == {"final"}
    # The chunks' children come from a fork server that imported those modules first.
    assert os.environ.get("KOPT_TRITON_PRELOAD") == str(out / "preload.txt")
    assert (out / "preload.txt").read_text() == "xml\nxml.dom\n"


def test_a_tile_that_covers_a_dim_is_not_swept_below_it(tmp_path, monkeypatch):
    mod = load()
    derived = {"params": [{"name": "BLOCK_SIZE", "origin": "BLOCK_SIZE", "kind": "constexpr", "values": [1024, 2048, 4096, 8192],
                           "covers": "n_cols"},
                          {"name": "num_warps", "origin": "num_warps", "kind": "num_warps", "values": [4, 8]}]}
    golden = tmp_path / "golden"
    golden.mkdir()
    (golden / "manifest.json").write_text(json.dumps({"dims": {"n_rows": 64, "n_cols": 3000}}))
    ran = []

    def fake_chunk(a, configs, tag, mode="paired"):
        ran.extend(configs if mode == "paired" else [])
        if mode == "check":
            assert configs == [{"BLOCK_SIZE": 4096, "num_warps": 4}]  # the first that can be right
            return {"status": "ok"}
        return {"status": "ok", "libs": [{"samples_ms": [1.0] * 3} for _ in configs]}

    out = sweep(mod, tmp_path, monkeypatch, derived, fake_chunk, golden=golden)
    assert sorted({c["BLOCK_SIZE"] for c in ran}) == [4096, 8192]
    rows = list(csv.DictReader(open(out / "measurements.csv")))
    assert len(rows) == 8
    assert {r["status"] for r in rows if int(r["BLOCK_SIZE"]) < 3000} == {"uncovered"}
    assert {r["status"] for r in rows if int(r["BLOCK_SIZE"]) >= 3000} == {"ok"}
    # Golden data without dims: nothing is ruled out.
    assert mod.uncovered(derived["params"], ["BLOCK_SIZE", "num_warps"], [{"BLOCK_SIZE": 1024, "num_warps": 4}], {}) == {}


def test_a_chunk_timed_by_a_fallback_is_timed_again_one_configuration_a_run_then_the_finalists_together(tmp_path,
                                                                                                       monkeypatch):
    """A paired run times every configuration by the most conservative method any needs: a chunk holding one that
    needs plain events reads every other's time with run_kernel's launch in it (liger_rms_norm, s27: 0.065 against
    kopt's 0.049 ms). Those are timed again alone, then the fastest and the project's point together."""
    mod = load()
    derived = {"params": [{"name": "BLOCK", "origin": "BLOCK", "kind": "constexpr", "values": [1, 2, 3, 4, 5, 6],
                           "default": 6}]}
    runs = []

    def fake_chunk(a, configs, tag, mode="paired"):
        if mode == "check":
            return {"status": "ok"}
        blocks = [c["BLOCK"] for c in configs]
        runs.append((tag.split("_")[0] if not tag[0].isdigit() else "chunk", blocks))
        # BLOCK=2 needs plain events (its run_kernel waits on the GPU): a run holding it adds 0.5 ms of launch to all.
        launch = 0.5 if 2 in blocks else 0.0
        final = 0.01 if tag.startswith("final_") else 0.0  # the finals' run, told apart by its times
        return {"status": "ok", "timing_method": "events_default_stream" if launch else "events_behind_sleep",
                "libs": [{"samples_ms": [b + launch + final] * 3} for b in blocks]}

    out = sweep(mod, tmp_path, monkeypatch, derived, fake_chunk, "--chunk", "3", "--finalists", "2")
    # Chunk [1 2 3] fell back: 1, 2 and 3 alone; chunk [4 5 6] did not. Finalists: 1 and 3 (2 alone still needs its
    # events: 2.5), and the project's 6.
    assert runs == [("chunk", [1, 2, 3]), ("chunk", [4, 5, 6]), ("single", [1]), ("single", [2]), ("single", [3]),
                    ("final", [1, 3, 6])]
    rows = {int(r["BLOCK"]): r for r in csv.DictReader(open(out / "measurements.csv"))}
    assert {b: rows[b]["basis"] for b in rows} == {1: "final", 2: "single", 3: "final", 4: "chunk", 5: "chunk", 6: "final"}
    assert float(rows[1]["median_ms"]) == 1.01 and float(rows[2]["median_ms"]) == 2.5 and float(rows[4]["median_ms"]) == 4
    assert rows[2]["timing_method"] == "events_default_stream" and rows[1]["timing_method"] == "events_behind_sleep"


def test_a_sweep_cut_after_its_first_chunk_leaves_what_it_measured(tmp_path, monkeypatch):
    mod = load()
    runs = []

    def fake_chunk(a, configs, tag, mode="paired"):
        if mode == "check":
            return {"status": "ok"}
        runs.append(configs)
        if len(runs) > 1:
            raise KeyboardInterrupt  # the caller's timeout, as corpus_bench.sh's `timeout` cuts it
        return {"status": "ok", "timing_method": "events_behind_sleep",
                "libs": [{"samples_ms": [c["BLOCK"] / 1000 / c["num_warps"]] * 3} for c in configs]}

    try:
        sweep(mod, tmp_path, monkeypatch, BLOCK_WARPS, fake_chunk, "--chunk", "2")
        assert False, "the fake cut the sweep"
    except KeyboardInterrupt:
        pass
    out = tmp_path / "sweep"
    assert not (out / "measurements.csv").exists(), "only a whole sweep writes the table"
    rows = list(csv.DictReader(open(out / "measurements.partial.csv")))
    assert [r["status"] for r in rows] == ["ok", "ok", "missing", "missing", "missing", "missing"]
    assert float(rows[1]["median_ms"]) == 256 / 1000 / 8
