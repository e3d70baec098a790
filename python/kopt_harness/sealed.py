"""Expected outputs out of a Triton candidate's reach (docs/GATES.md "The sealed seed"; the C++ side is
src/runner/sealed.h, whose judge this module talks to).

Golden data made by kopt has one more seed, the sealed seed, written only as <sealed_root>/<token>/seed.safetensors.
The process that imports and runs a Triton candidate, before it imports the candidate:
  * starts a judge, `$KOPT_EXE __judge` (kopt's own C++ judge: a fresh executable image, not dumpable), on a socket
    pair; the judge reads the sealed seed, hands out its inputs and keeps its expected outputs;
  * seals itself with Landlock (seal_away: the same rules as runner::seal_away), so that neither it nor anything it
    starts can read, change or remove anything beneath sealed_root.
Which process does it: every child of the fork server (forkserver.run_child, right after the fork, whatever the
request asks: the server itself stays unsealed, so each child's rules are made when it starts), and
`python3 -m kopt_harness triton-run` (__main__.py, before numpy is imported: Landlock seals the calling thread, and
numpy's BLAS starts threads). Both keep the result in CURRENT; triton_run reads it.

Imports only the standard library: it runs before anything heavy is imported.
"""

import ctypes
import fcntl
import json
import os
import socket
import stat
import struct
import time

SEALED_SEED_ID = -1  # the seed number results give the sealed seed, with "sealed": true beside it
MAX_HEADER_BYTES = 1 << 20
NO_SEALED_SEED = "the golden data has no sealed seed (made by an older kopt, or by hand)"

# ---- where sealed seeds live (contract/sealed_seed.h) ---------------------------------------------------------------


def cache_dir(sub, env=None):
    """util::kopt_cache_dir: KOPT_CACHE_DIR, XDG_CACHE_HOME/kopt, ~/.cache/kopt, else TMPDIR/kopt-cache."""
    env = os.environ if env is None else env
    if env.get("KOPT_CACHE_DIR"):
        return os.path.join(env["KOPT_CACHE_DIR"], sub)
    if env.get("XDG_CACHE_HOME"):
        return os.path.join(env["XDG_CACHE_HOME"], "kopt", sub)
    if env.get("HOME"):
        return os.path.join(env["HOME"], ".cache", "kopt", sub)
    return os.path.join(env.get("TMPDIR") or "/tmp", "kopt-cache", sub)


def sealed_root(env=None):
    return cache_dir("sealed", env)


def sealed_token(manifest):
    """The manifest's sealed token ("sealed": {"token": ...}), or None."""
    s = manifest.get("sealed") if isinstance(manifest, dict) else None
    t = s.get("token") if isinstance(s, dict) else None
    return t if isinstance(t, str) and t and all(c in "0123456789abcdef" for c in t) else None


# ---- Landlock (runner::seal_away, written again with ctypes: a forked child cannot exec the C++ one) -----------------

_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_REST = sum(1 << i for i in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
_FS_REFER, _FS_TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE
_SCOPE_SIGNAL = 1 << 1  # ABI 6
_NR_CREATE_RULESET, _NR_ADD_RULE, _NR_RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
_PR_SET_NO_NEW_PRIVS = 38
MAX_RULES = 8192


def _within(inner, outer):
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def seal_away(folder):
    """Seals `folder` away from this process and every process it starts (irreversible): Landlock grants every right
    beneath every other entry of each ancestor, listing only on the ancestors, nothing beneath `folder`. Only the
    calling thread is sealed (and what it starts): call it where no other thread runs. Returns the SealState's JSON
    ({"sealed", "landlock_abi", "signals_scoped"[, "off_reason"]}), as runner::SealState::to_json writes it."""
    st = {"sealed": False, "landlock_abi": 0, "signals_scoped": False}

    def off(reason):
        st["off_reason"] = reason
        return st

    try:
        os.makedirs(folder, exist_ok=True)
        target = os.path.realpath(folder)
    except OSError as e:
        return off(f"cannot resolve {folder}: {e}")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
    except (OSError, AttributeError) as e:
        return off(f"no C library to call Landlock through ({e})")

    def sc(*args):  # syscall(2) reads every argument as a long
        return libc.syscall(*[a if isinstance(a, ctypes.Array) or a is None else ctypes.c_long(a) for a in args])

    abi = sc(_NR_CREATE_RULESET, None, 0, 1)
    if abi < 1:
        return off(f"Landlock is not available on this kernel ({os.strerror(ctypes.get_errno())})")
    st["landlock_abi"] = abi
    handled = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_READ_DIR | _FS_REST
    handled |= _FS_REFER if abi >= 2 else 0
    handled |= _FS_TRUNCATE if abi >= 3 else 0
    scoped = _SCOPE_SIGNAL if abi >= 6 else 0
    attr = ctypes.create_string_buffer(struct.pack("=QQQ", handled, 0, scoped))
    ruleset = sc(_NR_CREATE_RULESET, attr, 24 if abi >= 6 else 8, 0)
    if ruleset < 0:
        return off(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    rules = [0]

    def add(path, rights):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return True  # gone, or not ours to open: it gets no rule
        try:
            allowed = rights if stat.S_ISDIR(os.fstat(fd).st_mode) else rights & _FILE_RIGHTS
            if not allowed:
                return True
            rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd))
            if sc(_NR_ADD_RULE, ruleset, 1, rule, 0) != 0:
                off(f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
                return False
        except OSError:
            return True
        finally:
            os.close(fd)
        rules[0] += 1
        if rules[0] > MAX_RULES:
            off(f"more than {MAX_RULES} directory entries to grant around {target}")
            return False
        return True

    try:
        parts = [p for p in target.split("/") if p]
        ancestor = "/"
        for nxt in parts:
            if not add(ancestor, _FS_READ_DIR):
                return st
            try:
                names = os.listdir(ancestor)
            except PermissionError:
                names = []
            except OSError as e:
                return off(f"cannot list {ancestor}: {e}")
            for name in names:
                if name == nxt:
                    continue
                entry = os.path.join(ancestor, name)
                if _within(target, os.path.realpath(entry)):
                    continue  # a link that leads to an ancestor of the target would grant the target too
                if not add(entry, handled):
                    return st
            ancestor = os.path.join(ancestor, nxt)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) != 0:
            return off(f"PR_SET_NO_NEW_PRIVS: {os.strerror(ctypes.get_errno())}")
        if sc(_NR_RESTRICT_SELF, ruleset, 0) != 0:
            return off(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    st["sealed"] = True
    st["signals_scoped"] = abi >= 6
    return st


# ---- the judge (runner::JudgeClient; the wire format of src/runner/sealed.cpp) ----------------------------------------


class JudgeError(Exception):
    pass


class JudgeClient:
    """The measuring process's side of `kopt __judge`. A message: an 8-byte little-endian length, a JSON header of
    that length whose "blobs" lists the byte counts of the blobs that follow."""

    def __init__(self, sock, pid):
        self.sock, self.pid = sock, pid
        self.judged = 0  # judge requests sent: the judge's own count must match (no one else asked it)
        self._inputs = {}

    @classmethod
    def spawn(cls, kopt_exe, env=None):
        """Starts `KOPT_EXE __judge` with its end of a socket pair as file descriptor 3. Before any candidate is
        imported and before seal_away: the judge must be able to read the sealed seeds."""
        if not kopt_exe:
            raise JudgeError("kopt's executable is not known (KOPT_EXE is not set)")
        if not os.access(kopt_exe, os.X_OK):
            raise JudgeError(f"kopt's executable {kopt_exe} cannot be run")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        spare = fcntl.fcntl(theirs.fileno(), fcntl.F_DUPFD_CLOEXEC, 10)  # never 3 itself: dup2 must clear CLOEXEC
        try:
            pid = os.posix_spawn(kopt_exe, [kopt_exe, "__judge"], dict(os.environ if env is None else env),
                                 file_actions=[(os.POSIX_SPAWN_DUP2, spare, 3)])
        except OSError as e:
            ours.close()
            raise JudgeError(f"cannot start the judge: {e}") from None
        finally:
            os.close(spare)
            theirs.close()
        return cls(ours, pid)

    def close(self):
        """Closes the socket (the judge sees the end of its input and exits) and reaps it."""
        try:
            self.sock.close()
        finally:
            for _ in range(200):
                if os.waitpid(self.pid, os.WNOHANG)[0] != 0:
                    return
                time.sleep(0.005)
            try:
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass

    def _send(self, header, blobs):
        header = dict(header, blobs=[len(b) for b in blobs])
        h = json.dumps(header).encode("utf-8")
        self.sock.sendall(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            if len(b):
                self.sock.sendall(b)

    def _exact(self, n):
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            r = self.sock.recv_into(view[got:], n - got)
            if r == 0:
                raise ConnectionError("closed")
            got += r
        return bytes(buf)

    def _receive(self):
        (n,) = struct.unpack("<Q", self._exact(8))
        if n == 0 or n > MAX_HEADER_BYTES:
            raise ConnectionError(f"a header of {n} bytes")
        h = json.loads(self._exact(n).decode("utf-8"))
        if not isinstance(h, dict) or not isinstance(h.get("blobs"), list):
            raise ConnectionError("a malformed header")
        return h, [self._exact(int(s)) for s in h["blobs"]]

    def exchange(self, header, blobs=()):
        try:
            self._send(header, list(blobs))
            reply, got = self._receive()
        except (OSError, ConnectionError, ValueError) as e:
            raise JudgeError(f"the judge process (pid {self.pid}) did not answer ({e}): it ended, or something else "
                             f"in this process used its socket") from None
        if "error" in reply:
            raise JudgeError(f"the judge: {reply['error']}")
        return reply, got

    def inputs(self, golden_dir):
        """The sealed seed's inputs (and in-out initial values) by buffer name, as bytes; asked once per folder."""
        golden_dir = str(golden_dir)
        if golden_dir not in self._inputs:
            reply, blobs = self.exchange({"op": "inputs", "golden": golden_dir})
            names = reply.get("names") or []
            if len(names) != len(blobs):
                raise JudgeError("the judge's inputs disagree with their names")
            self._inputs[golden_dir] = dict(zip(names, blobs))
        return self._inputs[golden_dir]

    def judge(self, golden_dir, atol, rtol, outputs):
        """The judge compares `outputs` (every output and in-out buffer by name: bytes-like) with the sealed seed's
        expected outputs. Returns {"status": ok|wrong_result|unwritten_output, "message", "outputs"} (no expected
        value in any of it)."""
        names = sorted(outputs)
        self.judged += 1  # the judge counts every judge request it reads, answered or refused
        reply, _ = self.exchange({"op": "judge", "golden": str(golden_dir), "atol": float(atol), "rtol": float(rtol),
                                  "names": names}, [memoryview(outputs[n]).cast("B") for n in names])
        if reply.get("judged") != self.judged:
            raise JudgeError(f"the judge answered {reply.get('judged')} comparisons where this process asked "
                             f"{self.judged}: something else in this process consulted it")
        return {"status": reply.get("status", "internal_error"), "message": reply.get("message", ""),
                "outputs": reply.get("outputs") or {}}


# ---- one process's judge and seal ---------------------------------------------------------------------------------


class Sealing:
    """What a measuring process did to keep the sealed seeds out of a candidate's reach (runner's Sealing)."""

    def __init__(self, judge=None, judge_error="", seal=None):
        self.judge, self.judge_error = judge, judge_error
        self.seal = seal or {"sealed": False, "landlock_abi": 0, "signals_scoped": False,
                             "off_reason": "this process was not sealed"}

    def answer_key(self, has_sealed_seed):
        """result["answer_key"], as the C++ child writes it."""
        out_of_reach = bool(self.judge is not None and self.seal.get("sealed") and has_sealed_seed)
        j = {"sealed_seed": bool(has_sealed_seed), "judge": self.judge is not None, "landlock": dict(self.seal),
             "out_of_reach": out_of_reach}
        if not out_of_reach:
            j["reason"] = (NO_SEALED_SEED if not has_sealed_seed else
                           "no judge process: " + self.judge_error if self.judge is None else
                           "the sealed seed is on disk where the candidate could open it: " +
                           self.seal.get("off_reason", "?"))
        return j


CURRENT = None  # this process's Sealing, once start() ran; None: nothing was done (the candidate is not sealed off)


def enabled(env=None):
    """KOPT_SEAL=off: no judge and no seal (a diagnostic; the results say the answer key was within reach)."""
    return (os.environ if env is None else env).get("KOPT_SEAL") != "off"


def _prepare_caches(env):
    """Folders a candidate's tools make on first use where the seal would forbid it: a new entry in an ancestor of
    sealed_root (HOME, ~/.cache) cannot be made once sealed. Triton's cache (~/.triton) is made now."""
    home = env.get("HOME")
    if home and not env.get("TRITON_CACHE_DIR"):
        try:
            os.makedirs(os.path.join(env.get("TRITON_HOME") or home, ".triton", "cache"), exist_ok=True)
        except OSError:
            pass


def start(env=None):
    """Starts the judge, then seals this process away from sealed_root(env). Once per process; before any candidate
    is imported; where no other thread runs. `env` (default os.environ) names kopt's executable (KOPT_EXE), the
    cache folder and KOPT_SEAL."""
    global CURRENT  # noqa: PLW0603 (one per process, by design)
    if CURRENT is not None:
        return CURRENT
    env = dict(os.environ if env is None else env)
    if not enabled(env):
        CURRENT = Sealing(judge_error="turned off by KOPT_SEAL=off",
                          seal={"sealed": False, "landlock_abi": 0, "signals_scoped": False,
                                "off_reason": "turned off by KOPT_SEAL=off"})
        return CURRENT
    s = Sealing()
    try:
        s.judge = JudgeClient.spawn(env.get("KOPT_EXE", ""), env)
    except JudgeError as e:
        s.judge_error = str(e)
    _prepare_caches(env)
    s.seal = seal_away(sealed_root(env))
    CURRENT = s
    return s
