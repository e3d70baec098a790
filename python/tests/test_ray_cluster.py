"""The Ray bridge end to end (kopt_harness/ray_worker.py) on a real one-node Ray cluster on loopback, with the fake
worker in place of `kopt __worker` and a custom resource `fake_gpu` (2 units) in place of GPUs: two bridges
serve at once from two actors, files are shipped and the results land at the driver's paths, a worker that dies
ends its bridge with exit 3 and a fresh bridge serves the next request, a closed stdin ends a bridge cleanly and
SIGTERM stops one mid-request, a killed actor ends its bridge with exit 3 and takes its worker along; the default
resource GPU (one declared, none real) gives the worker CUDA_VISIBLE_DEVICES, and `--ship auto` on the driver's
own node ships nothing. Skipped where Ray is not installed; `pytest -m ray` selects it.

The cluster is `ray start --head --block` in a session of its own, bound to 127.0.0.1
(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 keeps Ray from swapping 127.0.0.1 for the machine's address), with its
temporary folder in a fresh /tmp folder. It is stopped by signalling that process and then killing whatever is
left of its session, by process id: never `ray stop`, which ends every Ray process of the machine by name."""

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import PYTHON_DIR
from worker_support import Proc, files, identity, req  # noqa: F401  (files is a fixture)

pytestmark = pytest.mark.ray

try:
    import ray  # noqa: F401

    RAY = True
except ImportError as e:  # pragma: no cover - depends on the machine
    RAY = False
    RAY_MISSING = str(e)

STARTED = "Ray runtime started"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_pids(sid):
    """Processes whose session id is sid (field 6 of /proc/PID/stat)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            pids.append(int(name))
    return pids


def _stop_cluster(head, sid):
    if head.poll() is None:
        head.send_signal(signal.SIGTERM)  # `ray start --block` drains and stops the processes it started
        try:
            head.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    for pid in _session_pids(sid):  # whatever is left of the cluster's session
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if head.poll() is None:
        head.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster():
    if not RAY:
        pytest.skip(f"Ray is not installed ({RAY_MISSING}): pip install -r python/requirements.txt")
    ray_bin = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    tmp = tempfile.mkdtemp(prefix="kray", dir="/tmp")  # short: Ray's socket paths live under it
    port = _free_port()
    # TMPDIR: the actors' folders (ray_worker.WorkerHost) are made in the cluster's folder too.
    env = dict(os.environ, RAY_TMPDIR=tmp, TMPDIR=tmp, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
               RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    log_path = os.path.join(tmp, "head.log")
    log = open(log_path, "wb")
    head = subprocess.Popen([ray_bin, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
                             "--num-cpus=2", "--num-gpus=1", '--resources={"fake_gpu": 2}',
                             "--object-store-memory=200000000", "--disable-usage-stats", "--include-dashboard=false",
                             f"--temp-dir={tmp}"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            with open(log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            if STARTED in text:
                break
            if head.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"ray start failed (exit {head.poll()}):\n{text}")
            time.sleep(0.2)
        bridge_env = dict(os.environ, PYTHONPATH=PYTHON_DIR, RAY_TMPDIR=tmp, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
        bridge_env.pop("RAY_ADDRESS", None)
        yield {"address": f"127.0.0.1:{port}", "env": bridge_env, "tmp": tmp}
    finally:
        _stop_cluster(head, head.pid)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def bridge(cluster, tmp_path, slot, ship="always", resource="fake_gpu"):
    cmd = [sys.executable, "-m", "kopt_harness", "ray-worker", "--address", cluster["address"],
           "--resource", resource, "--ship", ship, "--slot", str(slot), "--start-timeout-s", "60",
           "--worker-cmd", f"{sys.executable} -m kopt_harness fake-worker"]
    return Proc(cmd, str(tmp_path / f"bridge{slot}.log"), env=cluster["env"])


def actor_folder(proc):
    """The actor's folder, from the bridge's first line."""
    m = re.search(r"folder (\S+)\)", proc.stderr())
    assert m, proc.stderr()
    return m.group(1)


def result(files, name):
    return json.loads((files / "results" / name).read_text())


def median(xs):
    return sorted(xs)[len(xs) // 2]


def test_two_bridges_serve_from_two_actors_and_ship_files(cluster, files, tmp_path):
    a, b = bridge(cluster, tmp_path, 0), bridge(cluster, tmp_path, 1)
    try:
        assert a.request(req(files, ["fast.so"], "a1.json", "time")) == {"rc": 0, "restart": False}
        assert b.request(req(files, ["other.so"], "b1.json", "time")) == {"rc": 0, "restart": False}
        ra, rb = result(files, "a1.json"), result(files, "b1.json")
        assert ra["status"] == "ok" and median(ra["samples_ms"]) == 0.25
        assert rb["status"] == "ok" and median(rb["samples_ms"]) == 0.5
        wa, wb = ra["fake_worker"], rb["fake_worker"]
        assert wa["pid"] != wb["pid"]  # two actors, two workers
        assert wa["ray_resources"] == {"fake_gpu": 1.0} and wb["ray_resources"] == {"fake_gpu": 1.0}
        assert {wa["ray_slot"], wb["ray_slot"]} == {"0", "1"}
        # Shipped: the workers read copies with the original bytes; the result names the driver's paths.
        assert wa["golden"]["identity"] != identity(files / "golden")
        want = hashlib.sha256((files / "golden" / "seed0.safetensors").read_bytes()).hexdigest()
        assert wa["golden"]["files"]["seed0.safetensors"] == want == wb["golden"]["files"]["seed0.safetensors"]
        assert wa["libs"][0]["path"] == str(files / "fast.so") and wa["out"] == str(files / "results" / "a1.json")
        # More requests on the same actor: the same worker, the golden folder not sent again.
        assert a.request(req(files, ["fast.so", "other.so"], "a2.json", "paired")) == {"rc": 0, "restart": False}
        ra2 = result(files, "a2.json")
        assert ra2["fake_worker"]["pid"] == wa["pid"]
        assert [median(x["samples_ms"]) for x in ra2["libs"]] == [0.25, 0.5]
        assert [x["lib"] for x in ra2["libs"]] == [str(files / "fast.so"), str(files / "other.so")]
        folders = [actor_folder(a), actor_folder(b)]
        assert all(f.startswith(cluster["tmp"]) and os.path.isdir(f) for f in folders)
        assert a.close() == 0 and b.close() == 0  # stdin closed: a clean exit, the actors' copies removed
        assert not any(os.path.exists(f) for f in folders)
        assert a.stderr().count("shipped --golden ") == 1, a.stderr()
        assert "fake-worker: paired fast.so other.so -> ok" in a.stderr()  # the remote worker's log, forwarded
        assert "actor on " in a.stderr() and "shipping files: yes" in a.stderr()
    finally:
        a.kill()
        b.kill()


def test_a_dead_worker_ends_its_bridge_and_a_fresh_bridge_serves_the_next_request(cluster, files, tmp_path):
    a = bridge(cluster, tmp_path, 0)
    c = None
    try:
        assert a.request(req(files, ["fast.so"], "ok.json")) == {"rc": 0, "restart": False}
        first_pid = result(files, "ok.json")["fake_worker"]["pid"]
        assert a.request(req(files, ["will_die.so"], "d.json")) is None  # no reply: it died
        assert a.p.wait(timeout=30) == 3
        assert not (files / "results" / "d.json").exists()
        err = a.stderr()
        assert "the remote worker ended (exit 3) without answering" in err, err
        assert not os.path.exists(actor_folder(a))  # the actor outlived its worker: it removed its copies
        # What kopt's parent does next: a fresh bridge (a fresh actor) for the next request. Both units are free
        # again: the dead bridge's actor was killed, and a second bridge holds the other one meanwhile.
        c = bridge(cluster, tmp_path, 1)
        d = bridge(cluster, tmp_path, 2)
        try:
            assert c.request(req(files, ["other.so"], "next.json", "time")) == {"rc": 0, "restart": False}
            assert d.request(req(files, ["fast.so"], "next2.json")) == {"rc": 0, "restart": False}
            n = result(files, "next.json")
            assert n["status"] == "ok" and median(n["samples_ms"]) == 0.5
            assert n["fake_worker"]["pid"] not in (first_pid, result(files, "next2.json")["fake_worker"]["pid"])
            # SIGTERM mid-request (a slow library): the bridge kills its actor and leaves at once, unanswered.
            d.send({"argv": req(files, ["slow_one.so"], "slow.json")})
            time.sleep(0.3)
            t0 = time.monotonic()
            d.p.send_signal(signal.SIGTERM)
            assert d.p.wait(timeout=15) == 128 + signal.SIGTERM
            assert time.monotonic() - t0 < 10
            assert "stopped by SIGTERM" in d.stderr()
            # Its unit is free again: another bridge gets an actor.
            e = bridge(cluster, tmp_path, 3)
            try:
                assert e.request(req(files, ["fast.so"], "e.json")) == {"rc": 0, "restart": False}
                assert e.close() == 0
            finally:
                e.kill()
            assert c.close() == 0
        finally:
            d.kill()
    finally:
        a.kill()
        if c is not None:
            c.kill()


def _ppid(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _gone(pid, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_the_gpu_resource_sets_cuda_visible_devices_and_auto_ships_nothing_on_the_same_node(cluster, files, tmp_path):
    g = bridge(cluster, tmp_path, 0, ship="auto", resource="GPU")
    try:
        assert g.request(req(files, ["fast.so"], "g.json", "time")) == {"rc": 0, "restart": False}
        w = result(files, "g.json")["fake_worker"]
        assert w["cuda_visible_devices"] == "0" and w["ray_resources"] == {"GPU": 1.0}
        assert w["golden"]["identity"] == identity(files / "golden")  # the driver's own folder: nothing shipped
        assert "shipping files: no" in g.stderr() and "shipped " not in g.stderr()
        # A worker whose CUDA context broke answers restart=true: forwarded as it is.
        assert g.request(req(files, ["broken_ctx.so"], "b.json")) == {"rc": 3, "restart": True}
        assert result(files, "b.json")["status"] == "cuda_error"
        assert g.close() == 0
    finally:
        g.kill()


def test_a_killed_actor_ends_its_bridge_with_exit_3_and_takes_its_worker_along(cluster, files, tmp_path):
    a = bridge(cluster, tmp_path, 0)
    try:
        assert a.request(req(files, ["fast.so"], "ok.json")) == {"rc": 0, "restart": False}
        worker = result(files, "ok.json")["fake_worker"]["pid"]
        actor = _ppid(worker)
        a.send({"argv": req(files, ["slow_one.so"], "slow.json")})
        time.sleep(0.3)
        os.kill(actor, signal.SIGKILL)  # as when its node is lost
        assert a.receive(timeout=60) is None
        assert a.p.wait(timeout=30) == 3
        assert "the Ray actor or its node was lost" in a.stderr(), a.stderr()
        assert _gone(worker, 10), "the worker outlived its actor"
        # The killed actor could not remove its copies: the next actor started on the node does.
        folder = actor_folder(a)
        assert os.path.isdir(folder)
        b = bridge(cluster, tmp_path, 1)
        try:
            assert b.request(req(files, ["fast.so"], "next.json")) == {"rc": 0, "restart": False}
            swept = re.search(r"removed \d+ folder\(s\) of actors that died: (.*)", b.stderr())
            assert swept and folder in swept.group(1).split() and not os.path.exists(folder), b.stderr()
            assert b.close() == 0
        finally:
            b.kill()
    finally:
        a.kill()


def test_no_cluster_at_the_address_or_no_node_with_the_resource_ends_the_bridge_with_exit_3(cluster, tmp_path):
    base = [sys.executable, "-m", "kopt_harness", "ray-worker", "--worker-cmd",
            f"{sys.executable} -m kopt_harness fake-worker"]

    def bridge_run(*args):
        return subprocess.run(base + list(args), env=cluster["env"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=60)

    t0 = time.monotonic()
    r = bridge_run("--address", f"127.0.0.1:{_free_port()}", "--connect-timeout-s", "2")  # nothing listens there
    assert r.returncode == 3 and r.stdout == "" and time.monotonic() - t0 < 30
    assert "cannot connect to the Ray cluster at 127.0.0.1:" in r.stderr
    r = bridge_run("--address", cluster["address"], "--resource", "nobody_has", "--start-timeout-s", "2")
    assert r.returncode == 3 and r.stdout == ""
    assert "no node gave one nobody_has to this slot within 2 s" in r.stderr


def test_kopt_dispatches_to_two_slots_through_the_bridge(cluster, tmp_path):
    """kopt's C++ side on this cluster (src/dispatch/ray_loopback_test.cpp): its dispatcher and MeasuringWorker
    with the bridge command `optimize --ray` starts, eight fake candidates on two slots, one whose worker dies
    retried on the other slot and then reported. KOPT_TESTS_BIN (set by CTest) names the test binary."""
    tests_bin = os.environ.get("KOPT_TESTS_BIN")
    if not tests_bin or not os.path.exists(tests_bin):
        pytest.skip("KOPT_TESTS_BIN is not set (CTest's python_harness sets it to the built kopt_tests)")
    env = dict(cluster["env"], KOPT_TEST_RAY_ADDRESS=cluster["address"], TMPDIR=str(tmp_path))
    p = subprocess.run([tests_bin, "--gtest_filter=RayLoopback.*"], env=env, capture_output=True, text=True, timeout=240)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "[  PASSED  ] 1 test" in out and "SKIPPED" not in out.split("[==========]")[-1], out
