"""`python3 -m kopt_harness fake-worker`: a stand-in for `kopt __worker` with no GPU, for tests of what carries
requests to a worker (the Ray bridge, kopt_harness/ray_worker.py).

It speaks the worker's protocol (src/runner/child.cpp worker_main): one request line `{"argv": [...]}` on stdin,
the argv being `kopt __runner`'s arguments; it writes a result JSON at --out that kopt's parent
(runner::interpret, src/runner/launch.cpp) reads as a run of the requested mode, then answers `{"rc": N,
"restart": false}` on stdout. Everything else goes to stderr.

Its figures are fake and deterministic: a library file holding a line `time_ms=X` takes X ms; any other takes a
time derived from its bytes' SHA-256 (0.01 to 1.009 ms). Time mode gives an odd number of samples spread
symmetrically around that time (so their median is exactly it); paired mode one sample per round and library.
Behaviours by the library's file name: one whose name contains `die` makes the worker exit 3 without answering
(as a GPU fault ends the real one); `slow` makes it sleep 1 s first; `broken` gets a cuda_error result and the
reply `{"rc": 3, "restart": true}`, after which the worker exits 3 (the real one's answer when a CUDA error left its
context unusable). A library or golden folder that does not
exist is a load error (rc 4), as in the real worker.

Every result carries "fake_worker": where it ran (host, pid, CUDA_VISIBLE_DEVICES, the Ray slot, node and
resources the bridge's actor set), the paths it was given and, for each file it read, its SHA-256 and its
(st_dev, st_ino): a test can tell a shipped copy from the original."""

import argparse
import hashlib
import json
import os
import socket
import struct
import sys
import time

from .runner_options import FLAGS, VALUE_OPTIONS
from .store import write_json_atomic

MODES = ("check", "time", "paired", "profile")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(message)


def parser():
    p = _Parser(prog="fake-worker request", add_help=False)
    for name, how in VALUE_OPTIONS.items():
        if how == "append":
            p.add_argument(name, action="append", required=True)
        elif how is None:
            p.add_argument(name, required=name in ("--golden", "--out"))
        else:
            p.add_argument(name, type=how)
    for name in FLAGS:
        p.add_argument(name, action="store_true")
    return p


def parse_request(argv):
    """The options of one request (argparse Namespace); ValueError for what `kopt __runner` would refuse."""
    o = parser().parse_args(argv)
    o.mode = o.mode or "check"
    if o.mode not in MODES:
        raise ValueError(f"--mode {o.mode}: expected one of {', '.join(MODES)}")
    return o


def fake_time_ms(lib_bytes):
    """The library's fake time: its `time_ms=X` line, else 0.01 + (the first 4 bytes of its SHA-256 % 1000) us."""
    for line in lib_bytes.decode("utf-8", "replace").splitlines():
        key, eq, value = line.strip().partition("=")
        if eq and key == "time_ms":
            return float(value)
    return 0.01 + (int.from_bytes(hashlib.sha256(lib_bytes).digest()[:4], "big") % 1000) / 1000.0


def time_samples(base_ms, n):
    """n samples (made odd) symmetric around base_ms: their median is base_ms exactly."""
    n = max(1, n) | 1
    half = n // 2
    return [base_ms * (1 + 0.001 * (k - half) / max(half, 1)) for k in range(n)]


def _identity(path):
    st = os.stat(path)
    return [st.st_dev, st.st_ino]


def _describe_inputs(o):
    libs = []
    for lib in o.lib:
        with open(lib, "rb") as f:
            data = f.read()
        libs.append({"path": lib, "sha256": hashlib.sha256(data).hexdigest(), "identity": _identity(lib),
                     "time_ms": fake_time_ms(data)})
    golden = {"path": o.golden, "identity": _identity(o.golden), "files": {}}
    for top, dirs, files in os.walk(o.golden):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(top, name)
            with open(p, "rb") as f:
                golden["files"][os.path.relpath(p, o.golden)] = hashlib.sha256(f.read()).hexdigest()
    return libs, golden


def _where():
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "ray_slot": os.environ.get("KOPT_RAY_SLOT"), "ray_node_id": os.environ.get("KOPT_RAY_NODE_ID"),
            "ray_resources": json.loads(os.environ.get("KOPT_RAY_RESOURCES") or "null")}


def _dump(path, value):
    """A one-element float32 safetensors file (out.fake = value), as --dump-outputs is a safetensors file."""
    header = json.dumps({"out.fake": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + struct.pack("<f", value))


def result_for(o):
    """(result JSON, rc) of one request whose inputs exist."""
    libs, golden = _describe_inputs(o)
    tol = {"atol": o.atol if o.atol is not None and o.atol >= 0 else 1e-5,
           "rtol": o.rtol if o.rtol is not None and o.rtol >= 0 else 1e-5}
    r = {"meta": {"kind": "runner_result", "producer": "kopt_harness.fake_worker"}, "status": "ok",
         "message": "", "mode": o.mode, "tolerance": tol}
    seeds = [{"seed": 0, "outputs": {}, "inputs": {}}]
    if o.mode == "paired":
        rounds = max(1, min(o.rounds if o.rounds is not None else 40, 40))
        r["rounds"] = rounds
        r["timing_method"] = "events_blocked"
        r["l2"] = o.l2 or "cold"
        r["gpu_clock"] = "events"
        r["phases_ms"] = {}
        r["libs"] = [{"lib": lib["path"], "status": "ok", "message": "", "check": {"seeds": seeds},
                      "samples_ms": time_samples(lib["time_ms"], rounds)} for lib in libs]
    else:
        r["seeds"] = seeds
        if o.mode == "time":
            n = max(o.min_samples or 10, 11)
            r["samples_ms"] = time_samples(libs[0]["time_ms"], n)
            r["call_samples_ms"] = [s + 0.005 for s in r["samples_ms"]]
            r["timing_method"] = "events_blocked"
            r["l2"] = o.l2 or "cold"
            r["gpu_clock"] = "events"
            r["recheck"] = {"outputs": {}, "inputs": {}}
        if o.dump_outputs:
            _dump(o.dump_outputs, float(libs[0]["time_ms"]))
    r["fake_worker"] = dict(_where(), libs=libs, golden=golden, out=o.out)
    return r, 0


def serve(stdin, reply):
    """The request loop: until stdin closes (returns 0) or a `die` library (exits 3 at once)."""
    for line in stdin:
        try:
            req = json.loads(line)
            argv = req["argv"]
            if not isinstance(argv, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            reply({"rc": 4, "error": 'a request is {"argv": [...]}'})
            continue
        try:
            o = parse_request(argv)
        except ValueError as e:
            print(f"fake-worker: {e}", file=sys.stderr, flush=True)
            reply({"rc": 4})
            continue
        names = [os.path.basename(lib) for lib in o.lib]
        if any("die" in n for n in names):
            print("fake-worker: a 'die' library: exiting without a reply", file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(3)
        if any("slow" in n for n in names):
            time.sleep(1.0)
        if any("broken" in n for n in names):  # a CUDA error that broke the context: answered, then the end
            write_json_atomic(o.out, {"status": "cuda_error", "message": "fake: an illegal address broke the context",
                                "mode": o.mode})
            reply({"rc": 3, "restart": True})
            print("fake-worker: a 'broken' library: exiting after the reply", file=sys.stderr, flush=True)
            os._exit(3)
        missing = [p for p in o.lib if not os.path.isfile(p)]
        if missing or not os.path.isdir(o.golden):
            what = f"cannot open {missing[0]}" if missing else f"no golden folder {o.golden}"
            r = {"status": "load_error", "message": what, "mode": o.mode}
            if missing:
                r["failed_lib"] = missing[0]
            write_json_atomic(o.out, r)
            reply({"rc": 4, "restart": False})
            continue
        r, rc = result_for(o)
        print(f"fake-worker: {o.mode} {' '.join(names)} -> ok", file=sys.stderr, flush=True)
        write_json_atomic(o.out, r)
        reply({"rc": rc, "restart": False})
    return 0


def main():
    out = sys.stdout

    def reply(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    return serve(sys.stdin, reply)
