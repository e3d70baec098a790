"""Helpers of the Ray bridge's tests (test_ray_worker.py, test_ray_cluster.py): a child speaking kopt's worker
line protocol, a run directory of fake libraries and a golden folder, the requests kopt's parent sends."""

import json
import os
import select
import subprocess
import sys
import time

import pytest

from conftest import PYTHON_DIR

FAKE_CMD = [sys.executable, "-m", "kopt_harness", "fake-worker"]
ENV = dict(os.environ, PYTHONPATH=PYTHON_DIR)


class Proc:
    """A child speaking the line protocol, read with a deadline so a broken test fails instead of hanging."""

    def __init__(self, cmd, stderr_path, env=ENV):
        self.stderr_path = stderr_path
        self._err = open(stderr_path, "wb")
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=env,
                                  cwd=PYTHON_DIR)

    def send(self, obj):
        line = obj if isinstance(obj, str) else json.dumps(obj)
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()

    def receive(self, timeout=60):
        """The next reply (parsed), or None when the child closed stdout (it died) within timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply within {timeout} s; stderr:\n{self.stderr()}")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                line = self.p.stdout.readline()
                return json.loads(line) if line else None

    def request(self, argv, timeout=60):
        self.send({"argv": argv})
        return self.receive(timeout)

    def close(self, timeout=30):
        self.p.stdin.close()
        return self.p.wait(timeout=timeout)

    def stderr(self):
        self._err.flush()
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self._err.close()


@pytest.fixture
def files(tmp_path):
    """A run directory: fake libraries, a golden folder, where results go."""
    run = tmp_path / "run"
    (run / "golden").mkdir(parents=True)
    (run / "golden" / "manifest.json").write_text('{"version": 1, "seeds": [0]}')
    (run / "golden" / "seed0.safetensors").write_bytes(b"\0" * 4096)
    for name, t in (("fast", 0.25), ("other", 0.5), ("slow_one", 0.75), ("will_die", 1.0), ("broken_ctx", 2.0)):
        (run / f"{name}.so").write_text(f"fake library {name}\ntime_ms={t}\n")
    (run / "hashed.so").write_bytes(b"no time line")
    (run / "results").mkdir()
    return run


def req(files, libs, out, mode="check", extra=()):
    argv = []
    for lib in libs:
        argv += ["--lib", str(files / lib)]
    return argv + ["--golden", str(files / "golden"), "--out", str(files / "results" / out), "--mode", mode,
                   "--max-time-s", "1", "--target-ci", "0.01", "--min-samples", "10", "--rounds", "12", *extra]


def identity(path):
    st = os.stat(path)
    return [st.st_dev, st.st_ino]
