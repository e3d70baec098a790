"""`python3 -m kopt_harness ray-worker`: a measuring worker for kopt whose real worker runs on a Ray cluster.

To kopt's parent (src/runner/worker.cpp) this process *is* a `kopt __worker` child: it reads one request line
`{"argv": [...the arguments of `kopt __runner`...]}` on stdin, answers one line `{"rc": N, "restart": B}` on
stdout, and the result JSON is at the request's `--out` path when it answers. Behind it, ONE Ray actor holding
one unit of a resource (a GPU by default) runs the worker command (`kopt __worker`) as a subprocess on its node
and forwards each request to it.

File shipping keeps the run directory on the driver: the input files and folders a request names (--lib,
--golden) are sent to the actor as bytes through Ray's object store (each one once per actor, keyed by path,
size and modification time: the golden folder, used by every request, is sent once), the request's paths are
rewritten to the actor's copies, and the outputs (--out, --dump-outputs) come back as bytes and are written at
the driver's paths; the actor's paths in the result JSON and in the worker's log are written back as the
driver's. `--ship never` passes the paths unchanged (a filesystem shared by every node); `auto` ships only when
the actor is on another node than this process.

When the remote worker dies, or the actor or its node is lost, this process writes one line to stderr and exits
3 without answering: kopt's parent sees what it sees when a local worker dies, and starts a fresh bridge (a
fresh actor) for its next request. See docs/MULTI_GPU.md.

The pieces that do not need Ray (the argv scan, packing and unpacking, WorkerHost and Bridge) are plain Python,
tested without a cluster (python/tests/test_ray_worker.py)."""

import collections
import hashlib
import io
import json
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass

from . import runner_options, store

# The value-taking options of `kopt __runner` (runner_options.py; its flags take no value).
VALUE_OPTIONS = frozenset(runner_options.VALUE_OPTIONS)
# The ones that name files or folders the worker reads (--lib repeats for --mode paired) and writes.
INPUT_OPTIONS = ("--lib", "--golden")
OUTPUT_OPTIONS = ("--out", "--dump-outputs")
RESULT_OPTION = "--out"  # the result JSON, in which the actor's paths are written back as the driver's

EXIT_OK, EXIT_DIED, EXIT_USAGE = 0, 3, 4
DEFAULT_CACHE_MB = 8192  # the actor's copies of inputs, least recently used evicted beyond this
STDERR_CAP = 1 << 20  # the most of the worker's stderr forwarded per request (its tail)
MALFORMED_REPLY = {"rc": 4, "error": 'a request is {"argv": [...]}'}  # what `kopt __worker` answers


class WorkerDied(Exception):
    """The remote worker, its actor or its node is gone: the request gets no reply."""


# ---------------------------------------------------------------------------------------------------------------
# The request's paths


@dataclass
class PathArg:
    index: int  # the argv token holding the path
    option: str  # "--lib", "--out", ...
    path: str
    inline: bool  # written "--option=PATH" in that one token

    @property
    def is_input(self):
        return self.option in INPUT_OPTIONS


def path_args(argv):
    """The input and output paths of a `kopt __runner` argv, in order. An option's value is the next token
    (CLI11's `--option value`) or follows '=' in the same token."""
    out = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        name, eq, value = tok.partition("=")
        if eq and name in VALUE_OPTIONS:
            if name in INPUT_OPTIONS or name in OUTPUT_OPTIONS:
                out.append(PathArg(i, name, value, True))
            i += 1
            continue
        if tok in VALUE_OPTIONS and i + 1 < len(argv):
            if tok in INPUT_OPTIONS or tok in OUTPUT_OPTIONS:
                out.append(PathArg(i + 1, tok, argv[i + 1], False))
            i += 2
            continue
        i += 1
    return out


def rewrite(argv, args, new_paths):
    """argv with each PathArg's path replaced by new_paths[index] (those absent are kept)."""
    out = list(argv)
    for a in args:
        if a.index not in new_paths:
            continue
        out[a.index] = f"{a.option}={new_paths[a.index]}" if a.inline else new_paths[a.index]
    return out


def substitute(obj, pairs):
    """obj (parsed JSON) with every occurrence of each pair's first string in its strings replaced by the
    second; the longest first, so a path that extends another is replaced whole."""
    pairs = sorted(((a, b) for a, b in pairs if a and a != b), key=lambda p: -len(p[0]))
    if not pairs:
        return obj

    def go(x):
        if isinstance(x, str):
            for a, b in pairs:
                if a in x:
                    x = x.replace(a, b)
            return x
        if isinstance(x, list):
            return [go(v) for v in x]
        if isinstance(x, dict):
            return {go(k): go(v) for k, v in x.items()}
        return x

    return go(obj)


# ---------------------------------------------------------------------------------------------------------------
# Files and folders as bytes


def fingerprint(path):
    """(kind, key): kind is "file", "dir" or "missing"; key changes when the path, a size or a modification time
    under it changes (a folder's own mtime does not change when a file in it is rewritten, so every entry
    counts)."""
    h = hashlib.sha256()
    h.update(os.path.abspath(path).encode("utf-8", "surrogateescape"))
    if os.path.isfile(path):
        st = os.stat(path)
        h.update(f"\0file\0{st.st_size}\0{st.st_mtime_ns}".encode())
        return "file", h.hexdigest()[:32]
    if os.path.isdir(path):
        h.update(b"\0dir")
        for top, dirs, files in os.walk(path, followlinks=True):
            dirs.sort()
            for name in sorted(files):
                p = os.path.join(top, name)
                st = os.stat(p)
                rel = os.path.relpath(p, path)
                h.update(f"\0{rel}\0{st.st_size}\0{st.st_mtime_ns}".encode("utf-8", "surrogateescape"))
        return "dir", h.hexdigest()[:32]
    return "missing", h.hexdigest()[:32]


def pack(path):
    """(kind, bytes): a file's bytes, or a folder as an uncompressed tar (symbolic links followed, so the copy
    stands alone); ("missing", b"") when there is nothing at path."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return "file", f.read()
    if os.path.isdir(path):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", dereference=True) as tar:
            tar.add(path, arcname=".")
        return "dir", buf.getvalue()
    return "missing", b""


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def unpack(kind, data, dest, mode=None):
    """Writes what pack() gave at dest (a file, or a folder made whole beside dest and then moved in place),
    replacing what was there. `mode` (a file's permission bits) is kept where given."""
    if kind == "file":
        os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
        store.write_atomic(dest, data)
        if mode is not None:
            os.chmod(dest, mode)
        return
    if kind != "dir":
        raise ValueError(f"cannot unpack a {kind!r} at {dest}")
    parent = os.path.dirname(os.path.abspath(dest))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(dest) + ".", dir=parent)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # Python without extraction filters: refuse anything that would land outside tmp
                for m in tar.getmembers():
                    target = os.path.realpath(os.path.join(tmp, m.name))
                    if not (target == os.path.realpath(tmp) or target.startswith(os.path.realpath(tmp) + os.sep)):
                        raise ValueError(f"{m.name}: outside the folder")
                tar.extractall(tmp)
        _remove(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _describe_exit(code):
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


# ---------------------------------------------------------------------------------------------------------------
# The actor's side: the worker process and the copies of its inputs


def _pdeathsig_preexec():
    """A preexec_fn that makes the child receive SIGKILL when the thread that started it (the actor's main
    thread) dies: a worker stuck in a kernel does not outlive an actor that Ray killed. None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig, sigkill = 1, int(signal.SIGKILL)

    def preexec():
        prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)

    return preexec


ROOT_PREFIX = "kopt-ray-slot"  # the actors' folders: ROOT_PREFIX<slot>-XXXXXXXX in the node's temporary folder
OWNER_FILE = "owner"  # in each: "<pid> <start time>" of the actor process that made it


def _process_start(pid):
    """The start time of a process (clock ticks since boot, field 22 of /proc/PID/stat), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def sweep_stale_roots(parent):
    """Removes the actors' folders in parent whose actor process is gone (killed before it could clean up:
    ray.kill, a dead worker, a lost node come back). A folder without an owner file is left alone. Linux only.
    Returns the folders removed."""
    removed = []
    if not sys.platform.startswith("linux"):
        return removed
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        path = os.path.join(parent, name)
        if not name.startswith(ROOT_PREFIX):
            continue
        try:
            with open(os.path.join(path, OWNER_FILE)) as f:
                pid, start = f.read().split()
        except (OSError, ValueError):
            continue
        if _process_start(int(pid)) != start:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class WorkerHost:
    """Runs the worker command and serves requests to it. In the Ray actor (RayWorkerHost) on the worker's node;
    directly in tests. Requests are plain data: argv, the inputs to materialise, the outputs to bring back.
    Without `root`, its folder is made in the node's temporary folder, after removing those of actors that died
    without cleaning up."""

    def __init__(self, worker_cmd, slot=0, root=None, cache_bytes=DEFAULT_CACHE_MB << 20, env=None):
        self.slot = slot
        self.swept = []
        if root is None:
            self.swept = sweep_stale_roots(tempfile.gettempdir())
            root = tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{slot}-")
        self.root = root
        os.makedirs(os.path.join(self.root, "in"), exist_ok=True)
        start = _process_start(os.getpid())
        if start is not None:
            with open(os.path.join(self.root, OWNER_FILE), "w") as f:
                f.write(f"{os.getpid()} {start}\n")
        self.cache_bytes = cache_bytes
        self.cache = collections.OrderedDict()  # key -> (local path, bytes), least recently used first
        self.requests = 0
        self.log_path = os.path.join(self.root, "worker.log")
        self._log = open(self.log_path, "ab")
        self._log_read = 0
        self.env = dict(os.environ if env is None else env)
        self.proc = subprocess.Popen(list(worker_cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, env=self.env, cwd=self.root, close_fds=True,
                                     preexec_fn=_pdeathsig_preexec())

    def info(self):
        return {"host": socket.gethostname(), "pid": os.getpid(), "worker_pid": self.proc.pid, "root": self.root,
                "cuda_visible_devices": self.env.get("CUDA_VISIBLE_DEVICES"), "node_id": None, "swept": self.swept}

    # -- inputs --
    def _materialise(self, inputs):
        """{index: local path} for the request's inputs, or ("missing", [keys]) for cached-at-the-driver keys
        this host no longer (or never) had."""
        missing, local = [], {}
        given = {e["key"]: e for e in inputs if e.get("data") is not None}
        for e in inputs:
            if e["kind"] == "missing":  # a path that does not exist at the driver: a path that does not exist here
                local[e["index"]] = os.path.join(self.root, "absent", e["key"], e["name"])
                continue
            if e["key"] in self.cache:
                self.cache.move_to_end(e["key"])
                local[e["index"]] = self.cache[e["key"]][0]
                continue
            src = given.get(e["key"])
            if src is None:
                missing.append(e["key"])
                continue
            dest = os.path.join(self.root, "in", e["key"], e["name"])
            unpack(src["kind"], src["data"], dest, src.get("mode"))
            self.cache[e["key"]] = (dest, len(src["data"]))
            local[e["index"]] = dest
        if missing:
            return "missing", sorted(set(missing))
        self._evict(keep={e["key"] for e in inputs})
        return "ok", local

    def _evict(self, keep):
        total = sum(n for _, n in self.cache.values())
        for key in list(self.cache):
            if total <= self.cache_bytes:
                break
            if key in keep:
                continue
            path, n = self.cache.pop(key)
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
            total -= n

    def _stderr_since(self):
        try:
            self._log.flush()
            with open(self.log_path, "rb") as f:
                f.seek(self._log_read)
                data = f.read()
        except OSError:
            return b""
        self._log_read += len(data)
        if len(data) > STDERR_CAP:
            data = b"[... the worker's stderr, cut ...]\n" + data[-STDERR_CAP:]
        return data

    # -- one request --
    def serve(self, argv, inputs=(), outputs=()):
        """Runs one request. inputs: [{index, option, kind, key, name, data (bytes or None: cached), mode}];
        outputs: [{index, name}]. Returns {"missing": [keys]} when an input must be sent, else {"reply": the
        worker's line or None, "died": None or how it ended, "local": {index: path}, "outputs": [{index, kind,
        data}], "stderr": bytes}."""
        state, local = self._materialise(list(inputs))
        if state == "missing":
            return {"missing": local}
        self.requests += 1
        out_dir = os.path.join(self.root, "out", str(self.requests))
        for k, o in enumerate(outputs):
            folder = os.path.join(out_dir, str(k))
            os.makedirs(folder, exist_ok=True)
            local[o["index"]] = os.path.join(folder, o["name"])
        args = rewrite(argv, path_args(argv), local)
        reply, died = None, None
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write((json.dumps({"argv": args}) + "\n").encode("utf-8"))
                self.proc.stdin.flush()
                line = self.proc.stdout.readline()
                if line:
                    reply = line.decode("utf-8", "replace").rstrip("\n")
            except (BrokenPipeError, OSError):
                pass
        if reply is None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            died = _describe_exit(self.proc.returncode)
        back = []
        for o in outputs:
            kind, data = pack(local[o["index"]])
            back.append({"index": o["index"], "kind": kind, "data": data})
        shutil.rmtree(out_dir, ignore_errors=True)
        return {"reply": reply, "died": died, "local": local, "outputs": back, "stderr": self._stderr_since()}

    def alive(self):
        return self.proc.poll() is None

    def shutdown(self, grace_s=5.0):
        """Closes the worker's stdin (a worker leaves on EOF), kills it after grace_s, removes the copies."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        tail = self._stderr_since()
        shutil.rmtree(self.root, ignore_errors=True)
        return {"exit": _describe_exit(self.proc.returncode), "stderr": tail}


class RayWorkerHost(WorkerHost):
    """The actor's class (decorated with ray.remote at run time): a WorkerHost whose worker sees the GPU Ray gave
    the actor (CUDA_VISIBLE_DEVICES, set by Ray in the actor's environment and inherited) and, for tests and
    logs, KOPT_RAY_SLOT, KOPT_RAY_NODE_ID and KOPT_RAY_RESOURCES (the actor's resources as JSON)."""

    def __init__(self, worker_cmd, slot=0, cache_bytes=DEFAULT_CACHE_MB << 20):
        import ray

        ctx = ray.get_runtime_context()
        self.node_id = ctx.get_node_id()
        env = dict(os.environ)
        gpu_ids = ray.get_gpu_ids()
        if gpu_ids and "CUDA_VISIBLE_DEVICES" not in env:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_ids)
        try:
            resources = ctx.get_assigned_resources()
        except Exception:  # an older Ray
            resources = {}
        env["KOPT_RAY_SLOT"] = str(slot)
        env["KOPT_RAY_NODE_ID"] = self.node_id
        env["KOPT_RAY_RESOURCES"] = json.dumps(resources, sort_keys=True)
        self.resources = resources
        super().__init__(worker_cmd, slot=slot, cache_bytes=cache_bytes, env=env)

    def info(self):
        i = super().info()
        i["node_id"] = self.node_id
        i["resources"] = self.resources
        return i


# ---------------------------------------------------------------------------------------------------------------
# The driver's side


def _fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


class Bridge:
    """Turns one request line into one reply line, through `call(method, *args)` to a WorkerHost (a Ray actor's
    method, or a WorkerHost in this process in tests). With ship=False the paths pass unchanged."""

    def __init__(self, call, ship, log=None):
        self.call = call
        self.ship = ship
        self.log = log or (lambda msg: None)
        self.sent = set()  # keys the host was sent (it may have evicted some: it then asks again)

    def handle(self, line):
        """The reply line for one request line; raises WorkerDied when the worker gives none."""
        try:
            req = json.loads(line)
        except json.JSONDecodeError:
            req = None
        argv = req.get("argv") if isinstance(req, dict) else None
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            return json.dumps(MALFORMED_REPLY)
        if not self.ship:
            res = self.call("serve", argv, [], [])
            self._forward_stderr(res.get("stderr", b""), [])
            if res["reply"] is None:
                raise WorkerDied(f"the remote worker ended ({res['died']}) without answering")
            return res["reply"]
        args = path_args(argv)
        inputs, outputs = [], []
        for a in args:
            name = os.path.basename(os.path.normpath(a.path)) or "input"
            if a.is_input:
                kind, key = fingerprint(a.path)
                inputs.append({"index": a.index, "option": a.option, "kind": kind, "key": key, "name": name,
                               "path": a.path, "data": None})
            else:
                outputs.append({"index": a.index, "name": name})
        self._attach(inputs, {e["key"] for e in inputs if e["kind"] != "missing" and e["key"] not in self.sent})
        res = self.call("serve", argv, inputs, outputs)
        if "missing" in res:  # evicted on the host since it was sent
            self._attach(inputs, set(res["missing"]))
            res = self.call("serve", argv, inputs, outputs)
            if "missing" in res:
                raise WorkerDied(f"the actor lost inputs it was just sent: {res['missing']}")
        self.sent.update(e["key"] for e in inputs if e["kind"] != "missing")
        pairs = [(res["local"][a.index], a.path) for a in args if a.index in res["local"]]
        self._write_outputs(args, res["outputs"], pairs)
        self._forward_stderr(res.get("stderr", b""), pairs)
        if res["reply"] is None:
            raise WorkerDied(f"the remote worker ended ({res['died']}) without answering")
        return res["reply"]

    def _attach(self, inputs, keys):
        """Packs the bytes of the inputs whose key is in keys (each key once)."""
        done = set()
        for e in inputs:
            if e["key"] not in keys or e["key"] in done or e["kind"] == "missing":
                continue
            kind, data = pack(e["path"])
            if kind == "missing":  # removed since fingerprint(): the host makes it a path that does not exist
                e["kind"] = "missing"
                continue
            e["kind"], e["data"] = kind, data
            if kind == "file":
                e["mode"] = os.stat(e["path"]).st_mode & 0o7777
            done.add(e["key"])
            self.log(f"shipped {e['option']} {e['path']} ({kind}, {_fmt_bytes(len(data))})")

    def _write_outputs(self, args, outputs, pairs):
        """Writes what came back at the driver's paths; the result JSON with the actor's paths made the driver's."""
        by_index = {a.index: a for a in args}
        for o in outputs:
            a = by_index[o["index"]]
            if o["kind"] == "missing":
                continue
            data = o["data"]
            if o["kind"] == "file" and a.option == RESULT_OPTION:
                try:
                    obj = json.loads(data)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    obj = None
                if obj is not None:
                    data = (json.dumps(substitute(obj, pairs), indent=2) + "\n").encode("utf-8")
            unpack(o["kind"], data, a.path)

    def _forward_stderr(self, data, pairs):
        if not data:
            return
        text = data.decode("utf-8", "replace")
        for a, b in sorted(pairs, key=lambda p: -len(p[0])):
            text = text.replace(a, b)
        sys.stderr.write(text)
        sys.stderr.flush()


# ---------------------------------------------------------------------------------------------------------------
# The command


class _Stop(Exception):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


POLL_S = 0.2  # how often a wait looks whether a signal asked this bridge to stop
SHUTDOWN_S = 1.5  # the clean exit after stdin closed, within the 2 s kopt's parent gives a worker it ends


class _Signals:
    """SIGTERM, SIGINT and SIGHUP only set a flag: raising from a handler inside Ray's C++ get loop turns into a
    SystemError there. Every wait of the bridge polls it (check()) at least every POLL_S."""

    NAMES = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self):
        self.got = []

    def install(self):
        for s in self.NAMES:
            signal.signal(s, self._on)

    def ignore(self):
        for s in self.NAMES:
            signal.signal(s, signal.SIG_IGN)

    def _on(self, signum, frame):
        self.got.append(signum)

    def check(self):
        if self.got:
            raise _Stop(self.got[0])


class _LineReader:
    """Lines of a file descriptor, read with select() so that a signal's flag is seen while waiting."""

    def __init__(self, fd, signals):
        self.fd, self.signals, self.buf = fd, signals, b""

    def readline(self):
        """The next line (with its newline), or b"" at end of file (a last line without a newline is dropped,
        as `kopt __worker` drops it). A signal stops the wait, unless the input has already ended: kopt's parent
        closes stdin and then signals, and that is the clean exit."""
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.fd], [], [], 0 if self.signals.got else POLL_S)
            if r:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.buf = b""
                    return b""
                self.buf += chunk
            self.signals.check()
        line, _, self.buf = self.buf.partition(b"\n")
        return line + b"\n"


def add_arguments(p):
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS"),
                   help="the Ray cluster: auto, HOST:PORT or ray://HOST:PORT (default $RAY_ADDRESS)")
    p.add_argument("--kopt", help="the kopt binary; the worker command is KOPT __worker (the same path on every node)")
    p.add_argument("--worker-cmd", help="the worker command run on the actor's node, instead of KOPT __worker "
                                        "(split like a shell line)")
    p.add_argument("--resource", default="GPU",
                   help="what the actor holds one unit of: GPU (num_gpus=1, the default) or a custom resource "
                        "name (resources={NAME: 1}, num_gpus=0)")
    p.add_argument("--ship", default=os.environ.get("KOPT_RAY_SHIP", "auto"), choices=["auto", "always", "never"],
                   help="send inputs and bring back outputs: when the actor is on another node (auto), always, or "
                        "never (a shared filesystem); default $KOPT_RAY_SHIP, else auto")
    p.add_argument("--slot", type=int, default=0, help="the measuring slot this bridge serves (a label)")
    p.add_argument("--log-prefix", default=None, help="the prefix of this bridge's own lines on stderr")
    p.add_argument("--cache-mb", type=int, default=DEFAULT_CACHE_MB,
                   help=f"the actor's copies of inputs kept, in MiB (default {DEFAULT_CACHE_MB})")
    p.add_argument("--connect-timeout-s", type=float, default=60.0,
                   help="how long to try to reach the cluster (default 60)")
    p.add_argument("--start-timeout-s", type=float, default=600.0,
                   help="how long to wait for a node with the resource free (default 600)")


def worker_command(args):
    """The worker command as a list, from --worker-cmd or --kopt; None when neither is given."""
    if args.worker_cmd:
        return shlex.split(args.worker_cmd)
    if args.kopt:
        return [os.path.abspath(args.kopt), "__worker"]
    return None


def actor_options(resource, python_dir):
    """ray actor options for one unit of resource: the actor needs no CPU (the worker waits on its GPU), is
    never restarted (a lost actor ends this bridge; kopt's parent starts a new one), and finds kopt_harness in
    python_dir (kopt's python folder, at the same path on every node)."""
    opts = {"num_cpus": 0, "max_restarts": 0, "max_task_retries": 0,
            "runtime_env": {"env_vars": {"PYTHONPATH": python_dir}}}
    if resource == "GPU":
        opts["num_gpus"] = 1
    else:
        opts["num_gpus"] = 0
        opts["resources"] = {resource: 1}
    return opts


def decide_ship(mode, address, driver_node, actor_node):
    if mode == "always":
        return True
    if mode == "never":
        return False
    if address and address.startswith("ray://"):  # a Ray client: this machine is no node of the cluster
        return True
    return driver_node != actor_node


def run(args):
    """The bridge; returns its exit code. stdout carries replies only: anything else (Ray's own messages
    included) goes to stderr."""
    prefix = args.log_prefix if args.log_prefix is not None else f"kopt ray-worker[slot {args.slot}]: "

    def log(msg):
        sys.stderr.write(prefix + msg + "\n")
        sys.stderr.flush()

    sys.stdout.flush()
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    cmd = worker_command(args)
    if not cmd:
        log("error: give --kopt PATH (the worker is PATH __worker) or --worker-cmd")
        return EXIT_USAGE
    if args.ship not in ("auto", "always", "never"):
        log(f"error: --ship (or KOPT_RAY_SHIP) {args.ship!r}: expected auto, always or never")
        return EXIT_USAGE
    if not args.address:
        log("error: no Ray cluster: give --address (auto, HOST:PORT, ray://HOST:PORT) or set RAY_ADDRESS")
        return EXIT_USAGE
    try:
        import ray
        import ray.exceptions
    except ImportError as e:
        log(f"error: Ray is not installed ({e}); install it with: pip install -r python/requirements.txt (ray>=2.30)")
        return EXIT_USAGE
    signals = _Signals()
    actor = None
    python_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def wait(ref, timeout_s=None):
        """ray.get(ref), polling the signals' flag; GetTimeoutError after timeout_s."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            signals.check()
            step = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
            try:
                return ray.get(ref, timeout=step)
            except ray.exceptions.GetTimeoutError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    try:
        # ray.init retries an unreachable cluster for minutes, deaf to signals: a timer ends it.
        def unreachable():
            log(f"cannot connect to the Ray cluster at {args.address} within {args.connect_timeout_s:g} s")
            sys.stderr.flush()
            os._exit(EXIT_DIED)

        timer = threading.Timer(args.connect_timeout_s, unreachable)
        timer.daemon = True
        timer.start()
        ray.init(address=args.address, logging_level="WARNING", log_to_driver=False, configure_logging=True)
        timer.cancel()
        signals.install()  # after ray.init, which installs handlers of its own
        host_cls = ray.remote(RayWorkerHost)
        actor = host_cls.options(**actor_options(args.resource, python_dir)).remote(
            cmd, args.slot, args.cache_mb << 20)
        try:
            info = wait(actor.info.remote(), args.start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            log(f"no node gave one {args.resource} to this slot within {args.start_timeout_s:g} s")
            return EXIT_DIED
        try:
            driver_node = ray.get_runtime_context().get_node_id()
        except Exception:  # a Ray Client may have none to give; decide_ship ships for it anyway
            driver_node = None
        ship = decide_ship(args.ship, args.address, driver_node, info["node_id"])
        log(f"actor on {info['host']} (node {info['node_id'][:12]}, worker pid {info['worker_pid']}, "
            f"CUDA_VISIBLE_DEVICES={info['cuda_visible_devices']}, resources {info.get('resources')}, "
            f"folder {info['root']}); shipping files: {'yes' if ship else 'no'}")
        if info.get("swept"):
            log(f"removed {len(info['swept'])} folder(s) of actors that died: {' '.join(info['swept'])}")
        bridge = Bridge(lambda method, *a: wait(getattr(actor, method).remote(*a)), ship, log)
        stdin = _LineReader(sys.stdin.fileno(), signals)
        while True:
            line = stdin.readline()
            if not line:
                break
            reply = bridge.handle(line.decode("utf-8", "replace"))
            proto.write(reply + "\n")
            proto.flush()
        # stdin closed: the parent is done with this worker. kopt's parent sends SIGTERM right after closing and
        # SIGKILL 2 s later: the worker (which leaves on EOF) and the actor's copies get SHUTDOWN_S of that,
        # signal or not; a worker that does not leave by then is killed with its actor, and its folder is removed
        # by the next actor on that node.
        try:  # ray.get, not wait(): a signal now is noted and not acted on
            res = ray.get(actor.shutdown.remote(SHUTDOWN_S / 2), timeout=SHUTDOWN_S)
            if res.get("stderr"):
                sys.stderr.buffer.write(res["stderr"])
                sys.stderr.flush()
        except ray.exceptions.RayError:
            pass
        return EXIT_OK
    except WorkerDied as e:
        log(str(e))
        try:  # the actor is still there: its copies go with it (its worker is gone already)
            ray.get(actor.shutdown.remote(0.1), timeout=SHUTDOWN_S)
        except ray.exceptions.RayError:
            pass
        return EXIT_DIED
    except ray.exceptions.RayError as e:  # the actor died, its node was lost, or the cluster went away
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        log(f"the Ray actor or its node was lost ({type(e).__name__}: {first})")
        return EXIT_DIED
    except ConnectionError as e:  # ray.init found no cluster at the address
        log(f"cannot connect to the Ray cluster at {args.address}: {e}")
        return EXIT_DIED
    except _Stop as e:
        log(f"stopped by {signal.Signals(e.signum).name}")
        return 128 + e.signum
    finally:
        signals.ignore()
        if actor is not None:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                pass
        try:
            proto.close()
        except OSError:
            pass
