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

The ephemeral seed (docs/GATES.md "The ephemeral seed"): a one-shot check run that kopt gives the seed's memfd
(`triton-run --ephemeral-fd N`) hands that descriptor to its judge (`__judge --ephemeral-fd`) in start() and closes its
own copy before anything of the candidate is imported, not dumpable meanwhile; the judge then serves that seed in the
sealed seed's place. Where the run goes through the fork server, the client sends the descriptor with its streams and
the server's child does this (fork_client.py, forkserver.py).

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
EPHEMERAL_SEED_ID = -2  # and the ephemeral seed, with "ephemeral": true (runner::kEphemeralSeedId)
EPHEMERAL_FD_OPTION = "--ephemeral-fd"  # triton-run's option naming the ephemeral seed's inherited memfd
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


# ---- the ephemeral seed's descriptor ----------------------------------------------------------------------------

_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4


def set_dumpable(on):
    """prctl(PR_SET_DUMPABLE): while not dumpable, no other process of the user can read this one's memory or open its
    descriptors through /proc/PID (util::set_dumpable). Returns whether it was dumpable before; None where prctl
    cannot be called."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        was = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
        if libc.prctl(_PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0) != 0:
            return None
        return was == 1
    except (OSError, AttributeError):
        return None


def ephemeral_fd_in(argv):
    """The descriptor `triton-run ... --ephemeral-fd N` names in `argv` (also --ephemeral-fd=N), or None (absent, or
    not a number: the command line's parser says so)."""
    for i, a in enumerate(argv):
        text = argv[i + 1] if a == EPHEMERAL_FD_OPTION and i + 1 < len(argv) else \
            a[len(EPHEMERAL_FD_OPTION) + 1:] if a.startswith(EPHEMERAL_FD_OPTION + "=") else None
        if text is not None:
            try:
                fd = int(text)
            except ValueError:
                return None
            return fd if fd >= 0 else None
    return None


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
    def spawn(cls, kopt_exe, env=None, ephemeral_fd=None):
        """Starts `KOPT_EXE __judge` with its end of a socket pair as file descriptor 3. Before any candidate is
        imported and before seal_away: the judge must be able to read the sealed seeds. `ephemeral_fd`: the ephemeral
        seed's memfd, which the judge gets as descriptor 4 (`__judge --ephemeral-fd 4`, as JudgeClient::spawn does);
        the caller closes its own."""
        if not kopt_exe:
            raise JudgeError("kopt's executable is not known (KOPT_EXE is not set)")
        if not os.access(kopt_exe, os.X_OK):
            raise JudgeError(f"kopt's executable {kopt_exe} cannot be run")
        eph = None
        if ephemeral_fd is not None:
            try:  # above the numbers they go to: dup2 onto 3 and 4 must not replace one another
                eph = fcntl.fcntl(ephemeral_fd, fcntl.F_DUPFD_CLOEXEC, 10)
            except OSError as e:
                raise JudgeError(f"the ephemeral seed's descriptor {ephemeral_fd}: {e.strerror}") from None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        spare = fcntl.fcntl(theirs.fileno(), fcntl.F_DUPFD_CLOEXEC, 10)  # never 3 itself: dup2 must clear CLOEXEC
        argv, actions = [kopt_exe, "__judge"], [(os.POSIX_SPAWN_DUP2, spare, 3)]
        if eph is not None:
            argv += ["--ephemeral-fd", "4"]
            actions.append((os.POSIX_SPAWN_DUP2, eph, 4))
        try:
            pid = os.posix_spawn(kopt_exe, argv, dict(os.environ if env is None else env), file_actions=actions)
        except OSError as e:
            ours.close()
            raise JudgeError(f"cannot start the judge: {e}") from None
        finally:
            os.close(spare)
            if eph is not None:
                os.close(eph)
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

    def __init__(self, judge=None, judge_error="", seal=None, ephemeral=False):
        self.judge, self.judge_error = judge, judge_error
        self.seal = seal or {"sealed": False, "landlock_abi": 0, "signals_scoped": False,
                             "off_reason": "this process was not sealed"}
        # The judge was given the ephemeral seed (start(ephemeral_fd=...)) and serves it in the sealed seed's place.
        self.ephemeral = ephemeral
        self.tmpdir = None  # the TMPDIR made beside the sealed folder before the seal (_prepare_tmpdir), if any

    def answer_key(self, has_sealed_seed):
        """result["answer_key"], as the C++ child writes it. The ephemeral seed was never on disk: out of reach with
        its judge alone, Landlock or not."""
        out_of_reach = bool(self.judge is not None and (self.ephemeral or (self.seal.get("sealed") and has_sealed_seed)))
        j = {"sealed_seed": bool(has_sealed_seed), "judge": self.judge is not None, "landlock": dict(self.seal),
             "out_of_reach": out_of_reach}
        if self.ephemeral:
            j["ephemeral_seed"] = True
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


def _prepare_tmpdir(env, root):
    """A TMPDIR where the seal lets new files be made, or None when the current one does. The seal forbids new entries
    in every ancestor of the sealed folder; with kopt's cache under /tmp (KOPT_CACHE_DIR=/tmp/...), /tmp is one, and the
    C compiler Triton's JIT runs on a cold cache (gcc writes its intermediate files to TMPDIR, else /tmp) aborts there.
    The folder made instead is `tmp` beside the sealed folder, made before the seal (so granted), and is set in this
    process's environment (what its children inherit) and for Python's tempfile."""
    try:
        target = os.path.realpath(root)
        # The environment's TMPDIR, and /tmp, where a process whose TMPDIR is unset (a fork-server child once the
        # client's environment replaces the server's) makes its files.
        ancestors = [os.path.realpath(t) for t in (env.get("TMPDIR"), "/tmp") if t]
    except OSError:
        return None
    if not any(_within(target, t) for t in ancestors):
        return None
    alt = os.path.join(os.path.dirname(target), "tmp")
    try:
        os.makedirs(alt, exist_ok=True)
    except OSError:
        return None
    return alt


def apply_tmpdir(environ):
    """After `environ` was replaced (a fork-server child takes its client's environment once sealed): the TMPDIR that
    start() made beside the sealed folder, so that the tools the kernel runs (gcc under Triton's JIT) can make their
    temporary files; without it gcc's default, /tmp, may be an ancestor of the sealed folder, where nothing new can be
    made, and gcc aborts (SIGABRT, H200 2026-12-04)."""
    if CURRENT is not None and CURRENT.tmpdir:
        environ["TMPDIR"] = CURRENT.tmpdir


def is_memfd(fd):
    """Whether `fd` is a memfd. F_GET_SEALS alone is not enough: every tmpfs file answers it (a /dev/shm file, or a
    /dev/null that a snapshot turned into a regular file on devtmpfs), so the descriptor's name must be a memfd's."""
    try:
        fcntl.fcntl(fd, fcntl.F_GET_SEALS)  # EINVAL for files of most filesystems, EBADF for no descriptor
        return os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:")
    except OSError:
        return False


def start(env=None, ephemeral_fd=None):
    """Starts the judge, then seals this process away from sealed_root(env). Once per process; before any candidate
    is imported; where no other thread runs. `env` (default os.environ) names kopt's executable (KOPT_EXE), the
    cache folder and KOPT_SEAL. `ephemeral_fd`: the ephemeral seed's memfd, handed to the judge and closed here
    (whatever happens), this process not dumpable while it holds it; KOPT_SEAL=off turns the seal off, not this
    judge (runner's start_sealing)."""
    global CURRENT  # noqa: PLW0603 (one per process, by design)
    if CURRENT is not None:
        if ephemeral_fd is not None and is_memfd(ephemeral_fd):
            os.close(ephemeral_fd)  # never held past this call; CURRENT.ephemeral says the judge did not get it
        return CURRENT
    env = dict(os.environ if env is None else env)
    ephemeral = ephemeral_fd is not None
    off = {"sealed": False, "landlock_abi": 0, "signals_scoped": False, "off_reason": "turned off by KOPT_SEAL=off"}
    if not enabled(env) and not ephemeral:
        CURRENT = Sealing(judge_error="turned off by KOPT_SEAL=off", seal=off)
        return CURRENT
    s = Sealing(ephemeral=ephemeral)
    if ephemeral and not is_memfd(ephemeral_fd):  # not ours to close (a wrong number on the command line)
        s.judge_error = f"--ephemeral-fd {ephemeral_fd} is not a memfd this process holds"
    else:
        was_dumpable = set_dumpable(False) if ephemeral else None
        try:
            s.judge = JudgeClient.spawn(env.get("KOPT_EXE", ""), env, ephemeral_fd)
        except JudgeError as e:
            s.judge_error = str(e)
        finally:
            if ephemeral:
                os.close(ephemeral_fd)
                if was_dumpable:
                    set_dumpable(True)
    if not enabled(env):
        s.seal = off
        CURRENT = s
        return s
    _prepare_caches(env)
    root = sealed_root(env)
    tmp = _prepare_tmpdir(env, root)
    if tmp:
        import tempfile  # noqa: PLC0415 (only here)

        s.tmpdir = tmp
        os.environ["TMPDIR"] = tmp
        tempfile.tempdir = tmp
    s.seal = seal_away(root)
    CURRENT = s
    return s
