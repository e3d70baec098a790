"""The client of the Triton runner's fork server (forkserver.py): what kopt starts for every Triton candidate
that is not profiled.

    python3 -m kopt_harness.fork_client triton-run ARGS...

It behaves like `python3 -m kopt_harness triton-run ARGS...` (the same output files, streams and exit code;
a child that died by a signal makes the client die by the same signal), but the work runs in a child forked
by a server that has imported torch and triton already. The server is started on first use, one per
environment (its socket's name hashes the interpreter, the environment and the harness's sources), and leaves
after KOPT_TRITON_FORK_SERVER_IDLE_S seconds without work (default 300).

KOPT_TRITON_PRELOAD names a file of installed modules the kernel's import loads (kopt writes it from the baseline's
first check; preload.py): the client then uses a server that imported those too (its own key), and where that server
does not serve (forkserver.py: a thread or a CUDA context after the preload, written beside its socket as PATH.refused)
the one without them.

Where the server cannot be used (KOPT_TRITON_FORK_SERVER=0, no Unix sockets, the server does not start) the
client runs the harness itself, in this process, exactly as without it. SIGINT and SIGTERM are passed on to
the child; if the client is killed, the server kills the child. This module imports nothing heavy: its own
start is the interpreter's (~50 ms).

The ephemeral seed (`triton-run ... --ephemeral-fd N`, docs/GATES.md): the client makes itself not dumpable, sends
descriptor N with its streams (the request says "ephemeral": true) and closes it once the server has forked the
child that takes it (forkserver.py); refused, it runs the harness here, which takes N itself (__main__.py).
"""

import fcntl
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

START_TIMEOUT_S = 120.0
VOLATILE_ENV = ("_", "PWD", "OLDPWD", "SHLVL")
PRELOAD_ENV = "KOPT_TRITON_PRELOAD"


def enabled():
    return os.environ.get("KOPT_TRITON_FORK_SERVER", "1") != "0" and hasattr(socket, "send_fds")


def server_key(preload=True):
    """What the server's imports depend on: interpreter, environment, the harness's sources, and the preload file's
    contents (without `preload`: the key of the server that has none)."""
    h = hashlib.sha256(sys.executable.encode())
    for k in sorted(os.environ):
        if k not in VOLATILE_ENV and (preload or k != PRELOAD_ENV):
            h.update(f"\0{k}={os.environ[k]}".encode("utf-8", "surrogateescape"))
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            st = os.stat(os.path.join(here, name))
            h.update(f"\0{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    f = preload_file() if preload else None
    if f:
        with open(f, "rb") as fh:
            h.update(b"\0preload:" + hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:20]


def preload_file():
    """KOPT_TRITON_PRELOAD when it names a readable file, else None."""
    f = os.environ.get(PRELOAD_ENV)
    return f if f and os.path.isfile(f) and os.access(f, os.R_OK) else None


def socket_path(preload=True):
    base = os.environ.get("KOPT_TRITON_FORK_SERVER_DIR") or os.path.join(
        os.environ.get("TMPDIR", "/tmp"), f"kopt-forkserver-{os.getuid()}")
    os.makedirs(base, mode=0o700, exist_ok=True)
    return os.path.join(base, server_key(preload) + ".sock")


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return s
    except OSError:
        s.close()
        return None


def connect_or_start(path, preload=None):
    """A connection to the server at `path`, started if needed (with `preload`, a preload file); None if it cannot be
    had, or if that server refused to serve once (PATH.refused: it is not started again)."""
    s = _connect(path)
    if s is not None:
        return s
    if os.path.exists(path + ".refused"):
        return None
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one client starts the server; the others wait for it here
        s = _connect(path)
        if s is not None:
            return s
        if os.path.exists(path + ".refused"):
            return None
        try:
            os.unlink(path)  # a server that died left its socket behind
        except FileNotFoundError:
            pass
        idle = os.environ.get("KOPT_TRITON_FORK_SERVER_IDLE_S", "300")
        with open(path + ".log", "ab") as log:
            extra = ["--preload-file", preload] if preload else []
            proc = subprocess.Popen([sys.executable, "-m", "kopt_harness.forkserver", "--socket", path, "--idle-s", idle,
                                     *extra],
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                    close_fds=True)
        t0 = time.monotonic()
        while time.monotonic() - t0 < START_TIMEOUT_S:
            if os.path.exists(path):
                s = _connect(path)
                if s is not None:
                    return s
            if proc.poll() is not None:
                if preload and proc.returncode == 3:  # not safe to fork after its preload: never started again
                    with open(path + ".refused", "w", encoding="utf-8") as f:
                        f.write(f"see {path}.log\n")
                return None
            time.sleep(0.02)
        proc.kill()
        return None


def run_here(argv):
    """The harness in this process (no server)."""
    os.execv(sys.executable, [sys.executable, "-m", "kopt_harness", *argv])


def ephemeral_descriptor(argv):
    """The ephemeral seed's descriptor named by `argv` (--ephemeral-fd N) when this process holds it as a memfd, else
    None: anything else is the harness's to report (run_here), under the number the command line gives."""
    from kopt_harness import sealed  # noqa: PLC0415 (standard library only)

    fd = sealed.ephemeral_fd_in(argv)
    if fd is None or not sealed.is_memfd(fd):
        return None
    sealed.set_dumpable(False)  # no process of the user opens it through /proc/PID/fd while this one holds it
    return fd


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not enabled():
        run_here(argv)
    ephemeral = ephemeral_descriptor(argv)
    if ephemeral is None and any(a.split("=")[0] == "--ephemeral-fd" for a in argv):
        run_here(argv)  # a descriptor this process does not hold: the harness says what is wrong
    try:
        conn = None
        preload = preload_file()
        if preload:
            conn = connect_or_start(socket_path(True), preload)
        path = socket_path(False)
        if conn is None:
            conn = connect_or_start(path)
        if conn is None:
            print(f"kopt_harness.fork_client: the fork server did not start (its log: {path}.log); running here",
                  file=sys.stderr)
    except OSError as e:
        print(f"kopt_harness.fork_client: the fork server is not available ({e}); running here", file=sys.stderr)
        conn = None
    if conn is None:
        run_here(argv)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    if ephemeral is not None:
        request["ephemeral"] = True
    payload = json.dumps(request).encode("utf-8")
    fds = [0, 1, 2] + ([ephemeral] if ephemeral is not None else [])
    socket.send_fds(conn, [struct.pack(">I", len(payload)) + payload], fds)
    child = []

    def forward(sig, _frame):
        if child:
            try:
                os.kill(child[0], sig)
                return
            except ProcessLookupError:
                pass
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    replies = conn.makefile("r", encoding="utf-8")
    for line in replies:
        msg = json.loads(line)
        if "pid" in msg:
            child.append(int(msg["pid"]))
            if ephemeral is not None:  # the child holds it now (and gives it to its judge)
                os.close(ephemeral)
                ephemeral = None
        elif "exit" in msg:
            os._exit(int(msg["exit"]))
        elif "signal" in msg:
            sig = int(msg["signal"])
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            os._exit(128 + sig)
        elif "error" in msg:  # refused before any child ran: run here instead
            print(f"kopt_harness.fork_client: the fork server refused the request ({msg['error']}); running here",
                  file=sys.stderr)
            conn.close()
            run_here(argv)
    print("kopt_harness.fork_client: the fork server closed the connection without the child's exit status",
          file=sys.stderr)
    os._exit(70)


if __name__ == "__main__":
    main()
