"""The fake worker (kopt_harness/fake_worker.py), run as kopt's parent runs `kopt __worker`: a subprocess spoken
to in the worker's line protocol. It stands in for the real worker in the Ray bridge's tests, so its results must
read as kopt's parent reads a real one's (status, samples, paired libs) and its behaviours must hold."""

import json
import time

from kopt_harness import fake_worker
from worker_support import FAKE_CMD, Proc, files, req  # noqa: F401  (files is a fixture)


def test_fake_worker_answers_check_time_and_paired_as_kopt_reads_them(files, tmp_path):
    w = Proc(FAKE_CMD, str(tmp_path / "fw.log"))
    try:
        assert w.request(req(files, ["fast.so"], "c.json")) == {"rc": 0, "restart": False}
        c = json.loads((files / "results" / "c.json").read_text())
        assert c["status"] == "ok" and c["message"] == "" and c["mode"] == "check" and c["seeds"]
        assert c["meta"]["kind"] == "runner_result"
        assert w.request(req(files, ["fast.so"], "t.json", "time")) == {"rc": 0, "restart": False}
        t = json.loads((files / "results" / "t.json").read_text())
        assert t["status"] == "ok" and len(t["samples_ms"]) % 2 == 1 and len(t["samples_ms"]) >= 10
        assert sorted(t["samples_ms"])[len(t["samples_ms"]) // 2] == 0.25  # the median, exactly
        assert len(t["call_samples_ms"]) == len(t["samples_ms"]) and t["timing_method"] == "events_blocked"
        assert w.request(req(files, ["fast.so", "other.so"], "p.json", "paired")) == {"rc": 0, "restart": False}
        p = json.loads((files / "results" / "p.json").read_text())
        assert p["status"] == "ok" and p["rounds"] == 12 and [x["lib"] for x in p["libs"]] == [
            str(files / "fast.so"), str(files / "other.so")]
        assert [sorted(x["samples_ms"])[6] for x in p["libs"]] == [0.25, 0.5]
        assert all(len(x["samples_ms"]) == 13 for x in p["libs"])  # 12 rounds, made odd
        where = p["fake_worker"]
        assert where["pid"] == w.p.pid and where["golden"]["files"].keys() == {"manifest.json", "seed0.safetensors"}
        # A library without a time_ms line: a time from its bytes, the same every run.
        w.request(req(files, ["hashed.so"], "h.json", "time"))
        h = json.loads((files / "results" / "h.json").read_text())
        assert sorted(h["samples_ms"])[len(h["samples_ms"]) // 2] == fake_worker.fake_time_ms(b"no time line")
        assert w.close() == 0
    finally:
        w.kill()


def test_fake_worker_refuses_what_the_real_one_refuses(files, tmp_path):
    w = Proc(FAKE_CMD, str(tmp_path / "fw.log"))
    try:
        assert w.request(["--golden", "/g"]) == {"rc": 4}  # --lib and --out missing
        w.send("not json")
        assert w.receive() == {"rc": 4, "error": 'a request is {"argv": [...]}'}
        assert w.request(req(files, ["absent.so"], "a.json")) == {"rc": 4, "restart": False}
        a = json.loads((files / "results" / "a.json").read_text())
        assert a["status"] == "load_error" and a["failed_lib"] == str(files / "absent.so")
        assert w.request(req(files, ["fast.so"], "m.json", "bogus")) == {"rc": 4}
        assert w.request(req(files, ["fast.so"], "ok.json")) == {"rc": 0, "restart": False}  # still serving
        assert w.close() == 0
    finally:
        w.kill()


def test_fake_worker_dies_on_a_die_library_and_sleeps_on_a_slow_one(files, tmp_path):
    w = Proc(FAKE_CMD, str(tmp_path / "fw.log"))
    try:
        t0 = time.monotonic()
        assert w.request(req(files, ["slow_one.so"], "s.json")) == {"rc": 0, "restart": False}
        assert time.monotonic() - t0 >= 1.0
        assert w.request(req(files, ["fast.so", "will_die.so"], "d.json", "paired")) is None
        assert w.p.wait(timeout=10) == 3
        assert not (files / "results" / "d.json").exists()
    finally:
        w.kill()


def test_fake_worker_answers_restart_after_a_broken_context(files, tmp_path):
    w = Proc(FAKE_CMD, str(tmp_path / "fw.log"))
    try:
        assert w.request(req(files, ["broken_ctx.so"], "b.json", "time")) == {"rc": 3, "restart": True}
        assert json.loads((files / "results" / "b.json").read_text())["status"] == "cuda_error"
        assert w.p.wait(timeout=10) == 3
    finally:
        w.kill()


