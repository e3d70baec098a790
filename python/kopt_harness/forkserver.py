"""The fork server of the Triton runner (docs/TRITON.md, "Per-candidate overhead").

Every Triton candidate is measured in a fresh process, and importing torch and triton costs that process ~3 s
on the H200 host (check9, 2026-11-30): more than the rest of a candidate's overhead together. The server pays
it once: it imports torch, triton and the harness, never touches CUDA, and forks one child per request. The
child is as fresh as a new process where it matters (no CUDA context, no kernel module imported (with
--preload-file, only installed packages its import loads), the client's environment, working folder and standard
streams), so a candidate that crashes or corrupts its context takes
down only its own child, as before. Each child, right after the fork, starts its judge and seals itself away from
the sealed seeds (sealed.py; the server stays unsealed, so each child's Landlock rules are made when it starts),
whatever its request asks: a request can only ever run sealed.

    python3 -m kopt_harness.forkserver --socket PATH [--idle-s S] [--preload MODULE ...] [--preload-file FILE]

--preload-file (preload.py): the installed modules a kernel's import loaded, one a line, imported after the default
ones; a name that does not resolve to an installed module is skipped. Should they have started a thread, made a
CUDA context or left a forked child unable to use the GPU (preload.cuda_probe), the server does not serve (exit 3,
its reason in its log), and the client uses the server without them.

The ephemeral seed (docs/GATES.md): a request with "ephemeral": true sends a fourth descriptor, the seed's memfd
(the client's `--ephemeral-fd`). The child hands it to its judge and closes it as it seals itself (sealed.start),
before anything of the request runs; the server closes its copy right after the fork. The server is not dumpable for
its whole life, so that no process of the user (another request's child among them) can open a descriptor it holds
through /proc/PID/fd; each child is dumpable again once sealed, as a freshly started process is.
"""

import argparse
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
import warnings

DEFAULT_PRELOAD = ("numpy", "torch", "triton", "triton.language", "kopt_harness.cli")
MAX_REQUEST_BYTES = 1 << 20


def read_request(conn):
    """(request dict, [fd, fd, fd] or, with "ephemeral": true, [fd, fd, fd, the ephemeral seed's memfd]) from a fresh
    connection; raises ValueError on a malformed one."""
    conn.settimeout(10)
    data, fds, _, _ = socket.recv_fds(conn, 65536, 4)
    if len(data) < 4:
        data += _recv_exact(conn, 4 - len(data))
    (n,) = struct.unpack(">I", data[:4])
    if n > MAX_REQUEST_BYTES:
        raise ValueError(f"request of {n} bytes")
    body = data[4:]
    if len(body) < n:
        body += _recv_exact(conn, n - len(body))
    try:
        req = json.loads(body[:n].decode("utf-8"))
    except ValueError:
        req = None
    want = 4 if isinstance(req, dict) and req.get("ephemeral") is True else 3
    if not isinstance(req, dict) or len(fds) != want or not isinstance(req.get("argv"), list):
        for fd in fds:
            os.close(fd)
        raise ValueError("a request needs argv and three file descriptors (four with \"ephemeral\": true)")
    conn.settimeout(None)
    return req, fds


def _recv_exact(conn, n):
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            raise ValueError("the client closed the connection mid-request")
        out += chunk
    return out


def send_message(conn, obj):
    try:
        conn.sendall((json.dumps(obj) + "\n").encode("utf-8"))
    except OSError:
        pass  # the client is gone; its child was or will be killed


def run_child(req, fds, close_in_child):
    """In the forked child: the client's streams, folder and environment, then the harness's main. Never
    returns."""
    rc = 70
    try:
        import kopt_harness  # noqa: PLC0415 (preloaded)
        kopt_harness.IMPORT_T0 = time.perf_counter()  # the child's phases start at the fork, not the server's start
        for fd in close_in_child:
            try:
                os.close(fd)
            except OSError:
                pass
        ephemeral = fds[3] if len(fds) > 3 else None  # the seed's memfd: numbered above 2, as every fd received
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
            os.close(fd)
        # Every child is sealed (sealed.py), whatever its request asks: the judge first (given the ephemeral seed's
        # descriptor, which is closed there), then Landlock, from the server's own environment (the one its key
        # names), before anything of the request runs. One thread here. Then dumpable again (the server is not).
        from kopt_harness import sealed  # noqa: PLC0415 (standard library only)
        sealed.start(dict(os.environ), ephemeral_fd=ephemeral)
        sealed.set_dumpable(True)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.chdir(req.get("cwd") or "/")
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in (req.get("env") or {}).items()})
        sealed.apply_tmpdir(os.environ)  # the client's environment has not the sealed child's TMPDIR
        sys.stdin = os.fdopen(0, "r", closefd=False)
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        sys.argv = ["kopt_harness"] + [str(a) for a in req["argv"]]
        from kopt_harness import cli  # noqa: PLC0415 (preloaded: a dictionary lookup)
        rc = cli.main(sys.argv[1:])
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 (a bug here must not leave a second server running)
        import traceback  # noqa: PLC0415
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)


def fork_judged():
    """os.fork() without Python's warning (3.12+) that the process has more than one thread: a server that serves has had
    every thread its preload started judged (main: preload.fork_safety; only jemalloc's background thread, whose own fork
    handlers make a fork beside it safe, may remain), and the warning said nothing new in each candidate's log."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


class Server:
    def __init__(self, path, idle_s):
        self.path, self.idle_s = path, idle_s
        self.sel = selectors.DefaultSelector()
        self.children = {}  # pid -> connection
        self.last_activity = time.monotonic()
        self.listener = None

    def listen(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.path + ".tmp")
        os.chmod(self.path + ".tmp", 0o600)
        s.listen(64)
        with open(self.path + ".pid", "w", encoding="ascii") as f:
            f.write(f"{os.getpid()}\n")
        os.replace(self.path + ".tmp", self.path)  # ready only once it listens (clients poll the path)
        self.listener = s
        self.sel.register(s, selectors.EVENT_READ, "accept")

    def serve(self):
        signal.signal(signal.SIGTERM, lambda *_: self.stop(0))
        while True:
            for key, _ in self.sel.select(timeout=0.05):
                if key.data == "accept":
                    self.accept()
                else:
                    self.client_closed(key.fileobj, key.data)
            self.reap()
            if not self.children and time.monotonic() - self.last_activity > self.idle_s:
                self.stop(0)

    def accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last_activity = time.monotonic()
        try:
            req, fds = read_request(conn)
        except (ValueError, OSError) as e:
            send_message(conn, {"error": str(e)})
            conn.close()
            return
        open_fds = [self.listener.fileno()] + [c.fileno() for c in self.children.values()] + [conn.fileno()]
        if hasattr(self.sel, "fileno"):
            open_fds.append(self.sel.fileno())  # the epoll descriptor
        pid = fork_judged()
        if pid == 0:
            run_child(req, fds, open_fds)
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        self.sel.register(conn, selectors.EVENT_READ, pid)
        send_message(conn, {"pid": pid})

    def client_closed(self, conn, pid):
        """The client sent nothing after its request: readable means it closed (killed by kopt's timeout)."""
        try:
            more = conn.recv(1, socket.MSG_PEEK)
        except OSError:
            more = b""
        if more:
            conn.recv(4096)  # ignore chatter
            return
        self.sel.unregister(conn)
        if pid in self.children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def reap(self):
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            self.last_activity = time.monotonic()
            if conn is None:
                continue
            if os.WIFSIGNALED(status):
                send_message(conn, {"signal": os.WTERMSIG(status)})
            else:
                send_message(conn, {"exit": os.waitstatus_to_exitcode(status)})
            try:
                self.sel.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()

    def stop(self, rc):
        try:
            if self.listener is not None:
                for p in (self.path, self.path + ".pid"):
                    if os.path.exists(p):
                        os.unlink(p)
        finally:
            os._exit(rc)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m kopt_harness.forkserver")
    p.add_argument("--socket", required=True)
    p.add_argument("--idle-s", type=float, default=300.0)
    p.add_argument("--preload", action="append", default=None,
                   help="a module imported before serving (repeatable; default: numpy, torch, triton, the harness)")
    p.add_argument("--preload-file", default=None,
                   help="installed modules imported after those, one a line (preload.py): a kernel's imports")
    a = p.parse_args(argv)
    from kopt_harness import sealed  # noqa: PLC0415 (standard library only)
    sealed.set_dumpable(False)  # it receives ephemeral seeds' descriptors (above)
    if a.preload_file:
        # Before torch is imported (OpenMP reads it once, at its start): a preload that runs a parallel CPU operation
        # would start OpenMP's pool, one thread a core, and a pool a process used before fork() is not one its child
        # can use. Liger-Kernel's import did so on the H200 (s27: 15 threads named python3, and the server refused).
        # The children inherit one OpenMP thread: their work is on the GPU (the harness compares there) and their
        # environment is the client's. TORCH_WARM_POOL=0: no Inductor compile pool (a sidecar process) is started at
        # the import of torch._inductor.async_compile; the children never compile with Inductor.
        os.environ["OMP_NUM_THREADS"] = "1"
        os.environ["TORCH_WARM_POOL"] = "0"
    for name in a.preload if a.preload is not None else DEFAULT_PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass  # the child imports it (and reports its absence) as it would without the server
    if a.preload_file:
        from kopt_harness import preload  # noqa: PLC0415 (standard library only)
        t0, threads = time.monotonic(), preload.threads()
        try:
            imported, skipped = preload.import_installed(preload.read_names(a.preload_file))
        except OSError as e:
            print(f"forkserver: the preload file cannot be read: {e}", file=sys.stderr)
            return 3
        unsafe = preload.fork_safety(threads) or preload.cuda_probe()
        print(f"forkserver: preloaded {imported} installed module(s) of {a.preload_file} in "
              f"{time.monotonic() - t0:.2f} s ({skipped} skipped)" + (f"; not serving: {unsafe}" if unsafe else ""),
              file=sys.stderr, flush=True)
        if unsafe:
            return 3
    server = Server(a.socket, a.idle_s)
    server.listen()
    server.serve()


if __name__ == "__main__":
    sys.exit(main())
