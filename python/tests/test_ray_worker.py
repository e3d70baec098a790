"""The Ray bridge's pieces without Ray (kopt_harness/ray_worker.py): the argv scan and rewrite, shipping files
and folders, and the actor-side WorkerHost and the driver-side Bridge wired in one process around the fake worker
(test_fake_worker.py). The real cluster on loopback is test_ray_cluster.py."""

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest

from kopt_harness import fake_worker, ray_worker as rw
from worker_support import ENV, FAKE_CMD, files, identity, req  # noqa: F401  (files is a fixture)


# ---------------------------------------------------------------------------------------------------------------
# argv


def test_path_args_finds_inputs_and_outputs_in_both_spellings():
    argv = ["--lib", "/a/x.so", "--lib=/a/y.so", "--golden", "/g", "--out", "/r/result.json", "--mode", "paired",
            "--race", "--atol", "1e-5", "--dump-outputs=/r/d.safetensors", "--rounds", "40"]
    got = [(a.index, a.option, a.path, a.inline, a.is_input) for a in rw.path_args(argv)]
    assert got == [(1, "--lib", "/a/x.so", False, True), (2, "--lib", "/a/y.so", True, True),
                   (4, "--golden", "/g", False, True), (6, "--out", "/r/result.json", False, False),
                   (12, "--dump-outputs", "/r/d.safetensors", True, False)]


def test_path_args_skips_values_of_other_options_and_a_trailing_option():
    # The value of --smem-fill is never taken for an option, a flag takes no value, a last option has none.
    argv = ["--smem-fill", "--lib", "--race", "--lib", "/l.so", "--golden"]
    assert [(a.index, a.path) for a in rw.path_args(argv)] == [(4, "/l.so")]


def test_rewrite_keeps_the_spelling_and_other_tokens():
    argv = ["--lib", "/a/x.so", "--golden=/g", "--out", "/r.json", "--mode", "time"]
    args = rw.path_args(argv)
    new = rw.rewrite(argv, args, {1: "/L/x.so", 2: "/L/g"})
    assert new == ["--lib", "/L/x.so", "--golden=/L/g", "--out", "/r.json", "--mode", "time"]


def test_substitute_replaces_longest_paths_first_everywhere():
    obj = {"failed_lib": "/t/in/k1/a.so", "message": "cannot open /t/in/k1/a.so2 and /t/in/k1/a.so",
           "libs": [{"lib": "/t/in/k1/a.so"}], "/t/in/k1/a.so": 1, "n": 3}
    got = rw.substitute(obj, [("/t/in/k1/a.so", "/run/a.so"), ("/t/in/k1/a.so2", "/run/a.so2")])
    assert got == {"failed_lib": "/run/a.so", "message": "cannot open /run/a.so2 and /run/a.so",
                   "libs": [{"lib": "/run/a.so"}], "/run/a.so": 1, "n": 3}


# ---------------------------------------------------------------------------------------------------------------
# Files and folders as bytes


def test_fingerprint_follows_sizes_and_mtimes_of_files_and_of_files_inside_folders(tmp_path):
    f = tmp_path / "lib.so"
    f.write_bytes(b"one")
    g = tmp_path / "golden"
    (g / "sub").mkdir(parents=True)
    (g / "sub" / "seed0.safetensors").write_bytes(b"x" * 10)
    kind, k1 = rw.fingerprint(str(f))
    assert kind == "file" and rw.fingerprint(str(f)) == (kind, k1)
    f.write_bytes(b"three")
    assert rw.fingerprint(str(f))[1] != k1
    kind, d1 = rw.fingerprint(str(g))
    assert kind == "dir" and rw.fingerprint(str(g))[1] == d1
    p = g / "sub" / "seed0.safetensors"
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))  # same size, rewritten later
    assert rw.fingerprint(str(g))[1] != d1
    assert rw.fingerprint(str(tmp_path / "nothing"))[0] == "missing"


def test_pack_and_unpack_a_folder_and_a_file(tmp_path):
    src = tmp_path / "golden"
    (src / "a" / "b").mkdir(parents=True)
    (src / "manifest.json").write_text('{"v": 1}')
    (src / "a" / "b" / "t.bin").write_bytes(bytes(range(256)) * 40)
    (src / "empty").mkdir()
    kind, data = rw.pack(str(src))
    assert kind == "dir"
    dest = tmp_path / "copy" / "golden"
    dest.mkdir(parents=True)
    (dest / "stale").write_text("from before")  # replaced whole
    rw.unpack(kind, data, str(dest))
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == ["a", "a/b", "a/b/t.bin", "empty",
                                                                           "manifest.json"]
    assert (dest / "a" / "b" / "t.bin").read_bytes() == (src / "a" / "b" / "t.bin").read_bytes()
    lib = tmp_path / "k.so"
    lib.write_bytes(b"\x7fELF fake")
    kind, data = rw.pack(str(lib))
    rw.unpack(kind, data, str(tmp_path / "c2" / "k.so"), mode=0o755)
    assert (tmp_path / "c2" / "k.so").read_bytes() == b"\x7fELF fake"
    assert (tmp_path / "c2" / "k.so").stat().st_mode & 0o777 == 0o755
    assert rw.pack(str(tmp_path / "nothing")) == ("missing", b"")


def test_unpack_refuses_a_member_outside_the_folder(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("../escaped")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(Exception):
        rw.unpack("dir", buf.getvalue(), str(tmp_path / "d" / "golden"))
    assert not (tmp_path / "d" / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert not (tmp_path / "d" / "golden").exists()


# ---------------------------------------------------------------------------------------------------------------
# WorkerHost and Bridge in one process (what the Ray actor and the bridge's driver do, without Ray)


class Local:
    """A Bridge wired to a WorkerHost in this process; counts the calls and the bytes that crossed."""

    def __init__(self, tmp_path, ship=True, cache_bytes=1 << 30, cmd=FAKE_CMD):
        self.host = rw.WorkerHost(cmd, slot=7, root=str(tmp_path / "actor"), cache_bytes=cache_bytes, env=ENV)
        self.calls = []
        self.lines = []
        self.bridge = rw.Bridge(self._call, ship, self.lines.append)

    def _call(self, method, *args):
        self.calls.append((method, args))
        return getattr(self.host, method)(*args)

    def request(self, argv):
        return json.loads(self.bridge.handle(json.dumps({"argv": argv})))

    def shipped(self, option):
        return [ln for ln in self.lines if ln.startswith(f"shipped {option} ")]


def test_bridge_ships_inputs_once_and_brings_results_back_to_the_original_paths(files, tmp_path):
    b = Local(tmp_path)
    try:
        out = files / "results" / "t1.json"
        assert b.request(req(files, ["fast.so"], "t1.json", "time")) == {"rc": 0, "restart": False}
        r = json.loads(out.read_text())
        assert r["status"] == "ok" and sorted(r["samples_ms"])[len(r["samples_ms"]) // 2] == 0.25
        fw = r["fake_worker"]
        # The worker read copies (other inodes) with the same bytes, under the actor's folder ...
        assert fw["golden"]["identity"] != identity(files / "golden")
        assert fw["libs"][0]["identity"] != identity(files / "fast.so")
        assert fw["golden"]["files"] == json.loads(json.dumps(
            fake_worker._describe_inputs(fake_worker.parse_request(req(files, ["fast.so"], "x")))[1]["files"]))
        # ... and its paths in the result are the driver's again.
        assert fw["libs"][0]["path"] == str(files / "fast.so") and fw["golden"]["path"] == str(files / "golden")
        assert fw["out"] == str(out)
        sent_argv = b.calls[0][1][0]
        assert sent_argv == req(files, ["fast.so"], "t1.json", "time")  # the host rewrites, not the request
        assert not any(str(files) in p for p in os.listdir(tmp_path / "actor"))
        # Further requests: the golden folder and the library already there are not sent again.
        assert b.request(req(files, ["fast.so", "other.so"], "p.json", "paired"))["rc"] == 0
        assert b.request(req(files, ["other.so"], "c.json", "check", ["--dump-outputs",
                                                                     str(files / "results" / "d.st")]))["rc"] == 0
        assert len(b.shipped("--golden")) == 1
        assert sorted(ln.split()[2] for ln in b.shipped("--lib")) == [str(files / "fast.so"), str(files / "other.so")]
        p = json.loads((files / "results" / "p.json").read_text())
        assert [x["lib"] for x in p["libs"]] == [str(files / "fast.so"), str(files / "other.so")]
        assert (files / "results" / "d.st").read_bytes()[:8] != b""  # the dump came back too
        # A rewritten golden file is a new golden folder: sent again, and the worker sees the new bytes.
        (files / "golden" / "seed0.safetensors").write_bytes(b"\1" * 4097)
        assert b.request(req(files, ["fast.so"], "c2.json"))["rc"] == 0
        assert len(b.shipped("--golden")) == 2
        c2 = json.loads((files / "results" / "c2.json").read_text())
        assert c2["fake_worker"]["golden"]["files"]["seed0.safetensors"] == hashlib.sha256(
            b"\1" * 4097).hexdigest()
        # The actor's outputs are removed once brought back.
        assert os.listdir(tmp_path / "actor" / "out") == []
    finally:
        b.host.shutdown()
    assert not (tmp_path / "actor").exists()


def test_bridge_resends_what_the_actor_evicted(files, tmp_path):
    b = Local(tmp_path, cache_bytes=1)  # keeps only what the current request uses
    try:
        assert b.request(req(files, ["fast.so"], "a.json"))["rc"] == 0
        assert b.request(req(files, ["other.so"], "b.json"))["rc"] == 0  # golden kept (in use), fast.so evicted
        assert len(b.shipped("--golden")) == 1
        assert b.request(req(files, ["fast.so"], "c.json"))["rc"] == 0
        # The bridge thought fast.so was there; the host asked for it and the bridge sent it again.
        assert len(b.shipped("--lib " + str(files / "fast.so"))) == 2
        assert [c[0] for c in b.calls].count("serve") == 4
    finally:
        b.host.shutdown()


def test_bridge_maps_a_missing_input_to_a_missing_path_named_as_the_original(files, tmp_path):
    b = Local(tmp_path)
    try:
        assert b.request(req(files, ["absent.so"], "a.json")) == {"rc": 4, "restart": False}
        a = json.loads((files / "results" / "a.json").read_text())
        assert a["status"] == "load_error" and a["failed_lib"] == str(files / "absent.so")
        assert a["message"] == f"cannot open {files / 'absent.so'}"
    finally:
        b.host.shutdown()


def test_bridge_without_shipping_passes_the_paths_unchanged(files, tmp_path):
    b = Local(tmp_path, ship=False)
    try:
        assert b.request(req(files, ["fast.so"], "n.json"))["rc"] == 0
        r = json.loads((files / "results" / "n.json").read_text())
        assert r["fake_worker"]["golden"]["identity"] == identity(files / "golden")  # the original folder
        assert b.calls[0][1][1:] == ([], [])
        assert b.lines == []
    finally:
        b.host.shutdown()


def test_bridge_answers_a_malformed_request_itself(tmp_path):
    b = Local(tmp_path)
    try:
        for line in ("not json", "{}", '{"argv": "x"}', '{"argv": [1]}'):
            assert json.loads(b.bridge.handle(line)) == rw.MALFORMED_REPLY
        assert b.calls == []
    finally:
        b.host.shutdown()


def test_bridge_raises_when_the_worker_dies_and_forwards_its_stderr(files, tmp_path, capfd):
    b = Local(tmp_path)
    try:
        assert b.request(req(files, ["fast.so"], "ok.json"))["rc"] == 0
        with pytest.raises(rw.WorkerDied, match=r"exit 3"):
            b.request(req(files, ["will_die.so"], "d.json"))
        assert not (files / "results" / "d.json").exists()
        err = capfd.readouterr().err
        assert "a 'die' library" in err
        assert not b.host.alive()
        with pytest.raises(rw.WorkerDied, match=r"exit 3"):  # and stays dead
            b.request(req(files, ["fast.so"], "again.json"))
    finally:
        b.host.shutdown()


def test_bridge_forwards_a_restart_reply_unchanged(files, tmp_path):
    b = Local(tmp_path)
    try:
        line = b.bridge.handle(json.dumps({"argv": req(files, ["broken_ctx.so"], "b.json")}))
        assert line == '{"rc": 3, "restart": true}'  # the worker's own line
        r = json.loads((files / "results" / "b.json").read_text())
        assert r["status"] == "cuda_error" and r["mode"] == "check"
        # kopt's parent drops this worker now; a request sent anyway finds it gone.
        with pytest.raises(rw.WorkerDied):
            b.request(req(files, ["fast.so"], "again.json"))
    finally:
        b.host.shutdown()


def test_worker_host_kills_a_worker_that_ignores_its_stdin_at_shutdown(tmp_path):
    h = rw.WorkerHost([sys.executable, "-c", "import time, signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                                             "time.sleep(60)"], root=str(tmp_path / "a"), env=ENV)
    t0 = time.monotonic()
    res = h.shutdown(grace_s=0.5)
    assert time.monotonic() - t0 < 10 and res["exit"] == "killed by SIGKILL"


def test_sweep_removes_only_the_folders_of_actors_that_are_gone(tmp_path):
    def folder(name, owner):
        (tmp_path / name).mkdir()
        (tmp_path / name / "in").mkdir()
        if owner is not None:
            (tmp_path / name / rw.OWNER_FILE).write_text(owner)
        return tmp_path / name

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me = f"{os.getpid()} {rw._process_start(os.getpid())}"
    gone = folder(rw.ROOT_PREFIX + "0-gone", f"{dead.pid} 12345")
    reused = folder(rw.ROOT_PREFIX + "1-reused", f"{os.getpid()} 1")  # this pid, another process's start time
    alive = folder(rw.ROOT_PREFIX + "2-alive", me)
    unowned = folder(rw.ROOT_PREFIX + "3-unowned", None)  # being made, or not ours
    other = folder("something-else", f"{dead.pid} 12345")
    assert sorted(rw.sweep_stale_roots(str(tmp_path))) == sorted([str(gone), str(reused)])
    assert not gone.exists() and not reused.exists()
    assert alive.exists() and unowned.exists() and other.exists()


def test_a_worker_host_marks_its_folder_and_removes_it_at_shutdown(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where tempfile.mkdtemp() and gettempdir() look
    stale = tmp_path / (rw.ROOT_PREFIX + "0-stale")
    stale.mkdir()
    (stale / rw.OWNER_FILE).write_text("999999999 1")
    h = rw.WorkerHost(FAKE_CMD, slot=3, env=ENV)
    try:
        assert os.path.basename(h.root).startswith(rw.ROOT_PREFIX + "3-") and os.path.dirname(h.root) == str(tmp_path)
        assert (tmp_path / h.root / rw.OWNER_FILE).read_text().split()[0] == str(os.getpid())
        assert h.info()["swept"] == [str(stale)] and not stale.exists()
    finally:
        h.shutdown()
    assert not os.path.exists(h.root)


def test_line_reader_prefers_a_closed_stdin_to_a_signal(tmp_path):
    signals = rw._Signals()
    r, w = os.pipe()
    try:
        reader = rw._LineReader(r, signals)
        os.write(w, b'{"argv": []}\npart')
        assert reader.readline() == b'{"argv": []}\n'
        signals.got.append(15)  # SIGTERM while waiting, the parent still holding stdin open: stop
        with pytest.raises(rw._Stop):
            reader.readline()
        os.close(w)
        w = None
        assert reader.readline() == b""  # closed, then signalled (kopt's parent's order): the clean end
    finally:
        os.close(r)
        if w is not None:
            os.close(w)


# ---------------------------------------------------------------------------------------------------------------
# The command's choices


def test_actor_options_and_ship_decisions():
    gpu = rw.actor_options("GPU", "/opt/kopt/python")
    assert gpu["num_gpus"] == 1 and gpu["num_cpus"] == 0 and "resources" not in gpu and gpu["max_restarts"] == 0
    assert gpu["runtime_env"] == {"env_vars": {"PYTHONPATH": "/opt/kopt/python"}}
    fake = rw.actor_options("fake_gpu", "/p")
    assert fake["num_gpus"] == 0 and fake["resources"] == {"fake_gpu": 1}
    assert rw.decide_ship("auto", "auto", "n1", "n1") is False
    assert rw.decide_ship("auto", "10.0.0.1:6379", "n1", "n2") is True
    assert rw.decide_ship("auto", "ray://head:10001", "n1", "n1") is True  # a client is on no node
    assert rw.decide_ship("always", "auto", "n1", "n1") is True
    assert rw.decide_ship("never", "auto", "n1", "n2") is False


def test_the_command_line_and_its_usage_errors(tmp_path, monkeypatch):
    from kopt_harness import cli

    args = cli._parser().parse_args(["ray-worker", "--kopt", "build/kopt", "--resource", "fake_gpu", "--slot", "2"])
    assert rw.worker_command(args) == [os.path.abspath("build/kopt"), "__worker"]
    assert args.ship == "auto" and args.resource == "fake_gpu" and args.slot == 2
    args = cli._parser().parse_args(["ray-worker", "--worker-cmd", "python3 -m kopt_harness fake-worker"])
    assert rw.worker_command(args) == ["python3", "-m", "kopt_harness", "fake-worker"]
    env = {k: v for k, v in ENV.items() if k != "RAY_ADDRESS"}
    r = subprocess.run([sys.executable, "-m", "kopt_harness", "ray-worker", "--address", "auto"], env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 4 and "--kopt PATH" in r.stderr and r.stdout == ""
    r = subprocess.run([sys.executable, "-m", "kopt_harness", "ray-worker", "--kopt", "/k"], env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 4 and "RAY_ADDRESS" in r.stderr and r.stdout == ""
    r = subprocess.run([sys.executable, "-m", "kopt_harness", "ray-worker", "--ship", "sometimes"], env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 4
    r = subprocess.run([sys.executable, "-m", "kopt_harness", "ray-worker", "--kopt", "/k", "--address", "auto"],
                       env=dict(env, KOPT_RAY_SHIP="sometimes"), capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 4 and "KOPT_RAY_SHIP" in r.stderr
    monkeypatch.delenv("KOPT_RAY_SHIP", raising=False)
    assert cli._parser().parse_args(["ray-worker"]).ship == "auto"
    monkeypatch.setenv("KOPT_RAY_SHIP", "never")  # what kopt's environment gives every bridge it starts
    assert cli._parser().parse_args(["ray-worker"]).ship == "never"
