"""The Triton runner's fork server and its client (forkserver.py, fork_client.py), on the CPU with numpy buffers:
the client must behave like `python3 -m kopt_harness triton-run` (files, streams, exit codes, deaths by signal)
while the work runs in a child of one long-lived server."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from triton_support import CORRECT, PYTHON_DIR, VECADD_KERNEL, TritonHarness

# The kernel records, per call, the process that ran it and that process's parent.
WHO = CORRECT + "\n    import os as _os\n    CALLS[-1].update(pid=_os.getpid(), ppid=_os.getppid())"
RECORD = CORRECT + "\n    import os as _os, json as _json\n    open(_os.environ['KOPT_TEST_WHO'], 'w').write(" \
                   "_json.dumps([_os.getpid(), _os.getppid()]))"


@pytest.fixture
def fx(tmp_path):
    th = TritonHarness(tmp_path)
    # A short folder: a Unix socket's path must stay under 108 bytes, and pytest's tmp_path can be long.
    sockdir = pathlib.Path(tempfile.mkdtemp(prefix="kfs-", dir="/tmp")) / "s"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, KOPT_TRITON_FORK_SERVER_DIR=str(sockdir),
               KOPT_TRITON_FORK_SERVER_IDLE_S="20", KOPT_TEST_WHO=str(tmp_path / "who.json"))
    yield th, env, sockdir
    for sock in sockdir.glob("*.sock") if sockdir.exists() else []:  # stop the test's server
        pid = _server_pid(sock)
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    shutil.rmtree(sockdir.parent, ignore_errors=True)


def _server_pid(sock):
    try:
        with open(str(sock) + ".pid") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def client(th, env, kernel, golden, *extra, wait=True):
    out = str(th.root / "result.json")
    argv = [sys.executable, "-m", "kopt_harness.fork_client", "triton-run", "--kernel", kernel, "--golden", golden,
            "--out", out, "--device", "numpy", *extra]
    if not wait:
        return subprocess.Popen(argv, env=env, cwd=str(th.root), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    p = subprocess.run(argv, env=env, cwd=str(th.root), capture_output=True, text=True, timeout=120)
    return p, (th.read(out) if os.path.exists(out) else None)


def who(th):
    return th.read(str(th.root / "who.json"))


def test_the_client_gives_the_result_of_the_direct_run_from_a_forked_child(fx):
    th, env, sockdir = fx
    kernel = th.kernel(RECORD)
    _, golden = th.golden(kernel)
    p, r = client(th, env, kernel, golden)
    assert p.returncode == 0, p.stderr
    assert r["status"] == "ok" and [s["seed"] for s in r["seeds"]] == [0, 1]
    pid1, server1 = who(th)
    socks = list(sockdir.glob("*.sock"))
    assert len(socks) == 1 and _server_pid(socks[0]) == server1  # the child's parent is the server
    p, r = client(th, env, kernel, golden)
    assert p.returncode == 0 and r["status"] == "ok"
    pid2, server2 = who(th)
    assert server2 == server1 and pid2 != pid1  # the same server, a fresh child per request


def test_exit_codes_and_streams_pass_through(fx):
    th, env, _ = fx
    kernel = th.kernel("print('to stdout'); import sys; print('to stderr', file=sys.stderr); " + CORRECT)
    _, golden = th.golden(kernel)
    p, r = client(th, env, kernel, golden)
    assert p.returncode == 0 and r["status"] == "ok"
    assert "to stdout" in p.stdout and "to stderr" in p.stderr
    wrong = th.kernel(CORRECT + "; out[3] += 1")
    p, r = client(th, env, wrong, golden)
    assert p.returncode == 0 and r["status"] == "wrong_result"  # a verdict, not a failure of the child
    broken = th.kernel("raise ZeroDivisionError('boom')")
    p, r = client(th, env, broken, golden)
    assert p.returncode == 4 and r["status"] == "load_error" and "Traceback" in p.stderr
    p, _ = client(th, env, kernel, golden, "--mode", "nonsense")
    direct = th.cli("triton-run", "--kernel", kernel, "--golden", golden, "--out", str(th.root / "d.json"),
                    "--mode", "nonsense")
    assert p.returncode == direct.returncode == 4 and "invalid choice" in p.stderr  # a usage error, as directly


def test_a_child_killed_by_a_signal_kills_the_client_with_it(fx):
    th, env, _ = fx
    kernel = th.kernel("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    _, golden = th.golden(th.kernel(CORRECT))
    p, r = client(th, env, kernel, golden)
    assert p.returncode == -signal.SIGSEGV and r is None


def sleeping_child(th, env):
    """A client whose child records itself and sleeps: (client process, child pid) once the record is there."""
    kernel = th.kernel(RECORD + "\n    import time; time.sleep(60)")
    _, golden = th.golden(th.kernel(CORRECT))
    proc = client(th, env, kernel, golden, wait=False)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        try:
            return proc, who(th)[0]
        except (OSError, ValueError):  # not written yet, or half written
            time.sleep(0.05)
    raise AssertionError("the child never ran the kernel")


def test_killing_the_client_kills_the_child(fx):
    th, env, _ = fx
    proc, child = sleeping_child(th, env)
    os.kill(child, 0)  # running
    proc.kill()  # what kopt's timeout does
    proc.wait()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 10:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_sigterm_reaches_the_child(fx):
    th, env, _ = fx
    proc, _ = sleeping_child(th, env)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == -signal.SIGTERM  # the child died of it, and the client with it


def test_disabled_or_unavailable_it_runs_in_the_client_itself(fx, tmp_path):
    th, env, sockdir = fx
    kernel = th.kernel(RECORD)
    _, golden = th.golden(kernel)
    p, r = client(th, dict(env, KOPT_TRITON_FORK_SERVER="0"), kernel, golden)
    assert p.returncode == 0 and r["status"] == "ok"
    assert not sockdir.exists() or not list(sockdir.glob("*.sock"))
    # A server that cannot start (its folder is a file): the client runs the harness itself.
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    p, r = client(th, dict(env, KOPT_TRITON_FORK_SERVER_DIR=str(blocker)), kernel, golden)
    assert p.returncode == 0 and r["status"] == "ok" and "running here" in p.stderr
    # A server that starts and dies (a bad idle time): the client says where its log is and runs here.
    p, r = client(th, dict(env, KOPT_TRITON_FORK_SERVER_IDLE_S="soon"), kernel, golden)
    assert p.returncode == 0 and r["status"] == "ok"
    assert "did not start (its log: " in p.stderr and "running here" in p.stderr


def test_an_idle_server_leaves_and_removes_its_socket(fx):
    th, env, sockdir = fx
    kernel = th.kernel(CORRECT)
    _, golden = th.golden(kernel)
    p, _ = client(th, dict(env, KOPT_TRITON_FORK_SERVER_IDLE_S="0.5"), kernel, golden)
    assert p.returncode == 0
    t0 = time.monotonic()
    while list(sockdir.glob("*.sock")) and time.monotonic() - t0 < 10:
        time.sleep(0.1)
    assert not list(sockdir.glob("*.sock"))


def test_the_server_key_follows_the_environment_and_the_sources(monkeypatch):
    from kopt_harness import fork_client
    k1 = fork_client.server_key()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    k2 = fork_client.server_key()
    monkeypatch.setenv("PWD", "/elsewhere")  # volatile: not part of the key
    assert fork_client.server_key() == k2 != k1
    assert json.dumps(k1)  # a plain string


# The kernel records whether the installed module it imports was in sys.modules before its own import (preloaded).
PRELOADED = VECADD_KERNEL.replace(
    "import numpy as np",
    "import sys as _sys\n_PRE = 'xml.dom.minidom' in _sys.modules\nimport xml.dom.minidom  # noqa: F401\nimport numpy as np",
).replace("BEHAVIOUR", "out[:] = alpha * x + y\n    import os as _os, json as _json\n"
          "    open(_os.environ['KOPT_TEST_WHO'], 'w').write(_json.dumps(_PRE))")


def _preload_socket(env):
    out = subprocess.run([sys.executable, "-c", "from kopt_harness import fork_client; print(fork_client.socket_path(True))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_a_check_names_the_installed_modules_its_kernel_imported_and_a_server_given_them_preloads_them(fx, tmp_path):
    th, env, sockdir = fx
    kernel = th.write("kernel.py", PRELOADED)
    _, golden = th.golden(kernel)
    p, r = client(th, env, kernel, golden, "--mode", "check")
    assert p.returncode == 0 and r["status"] == "ok", p.stderr
    names = r["installed_imports"]
    assert "xml.dom.minidom" in names and "kopt_kernel" not in names  # the kernel itself lies in its own folder
    assert who(th) is False  # imported by the child, not before it
    listing = tmp_path / "preload.txt"
    listing.write_text("\n".join(names) + "\n")
    env2 = dict(env, KOPT_TRITON_PRELOAD=str(listing))
    p, r = client(th, env2, kernel, golden, "--mode", "check")
    assert p.returncode == 0 and r["status"] == "ok", p.stderr
    assert who(th) is True  # the server had imported it before it forked the child
    assert "xml.dom.minidom" not in r["installed_imports"]
    sock = _preload_socket(env2)
    assert "preloaded " in pathlib.Path(sock + ".log").read_text()
    assert len(list(sockdir.glob("*.sock"))) == 2  # the server without the preload stays as it was


def test_a_server_that_refused_its_preload_is_not_started_again_and_the_plain_one_serves(fx, tmp_path):
    th, env, sockdir = fx
    kernel = th.write("kernel.py", PRELOADED)
    _, golden = th.golden(kernel)
    listing = tmp_path / "preload.txt"
    listing.write_text("xml.dom.minidom\n")
    env2 = dict(env, KOPT_TRITON_PRELOAD=str(listing))
    sock = _preload_socket(env2)
    pathlib.Path(sock + ".refused").write_text("a test\n")
    p, r = client(th, env2, kernel, golden, "--mode", "check")
    assert p.returncode == 0 and r["status"] == "ok", p.stderr
    assert who(th) is False and not os.path.exists(sock)  # served by the plain server's child


def test_only_installed_modules_are_preloaded_and_a_thread_makes_the_server_unsafe(tmp_path, monkeypatch):
    import threading

    from kopt_harness import preload
    (tmp_path / "kopt_fake_shadow.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert preload.import_installed(["kopt_fake_shadow"]) == (0, 1)  # a module beside the user's files: skipped
    assert "kopt_fake_shadow" not in sys.modules
    assert preload.import_installed(["kopt_fake_shadow"], roots=[str(tmp_path)]) == (1, 0)
    assert preload.new_installed(set(), roots=[str(tmp_path)]) == ["kopt_fake_shadow"]
    assert preload.new_installed(set(), excluded=[str(tmp_path)], roots=[str(tmp_path)]) == []
    sys.modules.pop("kopt_fake_shadow", None)
    before, count = preload.threads(), preload.thread_count()
    assert preload.fork_safety(before) is None and preload.fork_safety(count) is None
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        # Named by Linux's name of the new thread (the interpreter's own, unless the thread set one)
        comm = open(f"/proc/self/task/{t.native_id}/comm").read().strip()
        assert preload.fork_safety(before) == f"1 thread(s) started by the preload ({comm})"
        assert "1 thread(s) started" in (preload.fork_safety(count) or "")
    finally:
        stop.set()
        t.join()


def test_the_cuda_probe_refuses_a_preload_after_which_a_forked_child_finds_no_gpu(monkeypatch):
    import types

    from kopt_harness import preload

    def fake_torch(available, fails=False):
        cuda = types.SimpleNamespace(is_available=lambda: available, synchronize=lambda: None,
                                     is_initialized=lambda: False)

        def ones(*_a, **_k):
            if fails:
                raise RuntimeError("CUDA error: initialization error")
            return types.SimpleNamespace(add_=lambda _x: None)
        return types.SimpleNamespace(cuda=cuda, ones=ones)

    monkeypatch.delenv("KOPT_TRITON_DEVICE", raising=False)
    monkeypatch.setattr(preload, "_gpu_present", lambda: True)
    monkeypatch.setitem(sys.modules, "torch", fake_torch(True))
    assert preload.cuda_probe() is None  # the child made its tensor
    monkeypatch.setitem(sys.modules, "torch", fake_torch(False))
    assert "probe exit 2" in preload.cuda_probe()  # a GPU the machine shows, which the child's CUDA does not find
    monkeypatch.setitem(sys.modules, "torch", fake_torch(True, fails=True))
    assert "probe exit 1" in preload.cuda_probe()
    monkeypatch.setattr(preload, "_gpu_present", lambda: False)
    assert preload.cuda_probe() is None  # no GPU here: no child would use one
    monkeypatch.setattr(preload, "_gpu_present", lambda: True)
    monkeypatch.setenv("KOPT_TRITON_DEVICE", "numpy")
    assert preload.cuda_probe() is None  # the children keep their buffers in numpy


def test_the_preload_runs_with_one_openmp_thread_and_a_thread_it_starts_anyway_refuses_the_server(tmp_path, monkeypatch):
    """Liger-Kernel's import started OpenMP's pool in the server (15 threads, s27): a server with a preload file sets
    OMP_NUM_THREADS=1 (and TORCH_WARM_POOL=0) before its first import; a thread started all the same is named in the
    refusal (exit 3)."""
    import threading

    from kopt_harness import forkserver, preload
    listing = tmp_path / "preload.txt"
    listing.write_text("some.module\n")
    stop, seen, started = threading.Event(), [], []

    def fake_import(names, roots=None):
        seen.append((os.environ.get("TORCH_WARM_POOL"), os.environ.get("OMP_NUM_THREADS")))
        if os.environ.get("TORCH_WARM_POOL") != "0" or started == ["again"]:  # what torch's warm pool would start
            t = threading.Thread(target=stop.wait, daemon=True)
            t.start()
            started.append(t)
        return len(names), 0

    class NoServer:
        def __init__(self, *_a):
            pass

        def listen(self):
            pass

        def serve(self):
            started.append("served")

    monkeypatch.setattr(preload, "import_installed", fake_import)
    monkeypatch.setattr(preload, "cuda_probe", lambda: None)
    monkeypatch.setattr(forkserver, "Server", NoServer)
    from kopt_harness import sealed
    monkeypatch.setattr(sealed, "set_dumpable", lambda _x: None)  # this test's process stays as it is
    monkeypatch.setenv("TORCH_WARM_POOL", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "16")  # monkeypatch restores both afterwards
    try:
        sock = str(tmp_path / "s.sock")
        assert forkserver.main(["--socket", sock, "--preload", "json", "--preload-file", str(listing)]) is None
        assert seen == [("0", "1")] and started == ["served"]  # the pools off: no thread, the server serves
        started[:] = ["again"]  # a module that starts a thread whatever the variable says
        assert forkserver.main(["--socket", sock, "--preload", "json", "--preload-file", str(listing)]) == 3
        assert len(started) == 2 and "served" not in started
    finally:
        stop.set()


def test_a_jemalloc_background_thread_does_not_make_the_server_unsafe():
    """jemalloc's background thread (a package that bundles jemalloc, s27) is fork-safe by jemalloc's own atfork
    handlers: not counted; any other thread is."""
    import ctypes
    import threading

    from kopt_harness import preload
    libc = ctypes.CDLL(None)
    before = preload.threads()
    stop, named = threading.Event(), threading.Event()

    def run(name):
        libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME: the thread's comm, as a native library names it
        named.set()
        stop.wait()

    t = threading.Thread(target=run, args=("jemalloc_bg_thd",), daemon=True)
    t.start()
    named.wait(5)
    try:
        assert preload.fork_safety(before) is None
        named.clear()
        u = threading.Thread(target=run, args=("omp_worker",), daemon=True)
        u.start()
        named.wait(5)
        assert preload.fork_safety(before) == "1 thread(s) started by the preload (omp_worker)"
    finally:
        stop.set()


def test_the_server_forks_beside_a_judged_thread_without_pythons_warning():
    """Python 3.12 warns at a fork of a multi-threaded process; a serving server's threads were judged fork-safe
    (jemalloc's), so its fork says nothing (s28: the warning in every Liger candidate's server log)."""
    import threading
    import warnings

    from kopt_harness import forkserver
    if sys.version_info < (3, 12):
        pytest.skip("Python before 3.12 does not warn at a fork")
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # os.fork() here would raise it (3.12+)
            pid = forkserver.fork_judged()
            if pid == 0:
                os._exit(0)
            assert os.waitpid(pid, 0)[1] == 0
    finally:
        stop.set()
