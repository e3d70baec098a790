"""The installed modules a Triton kernel's import pulls in, preloaded by the fork server (docs/TRITON.md,
"Per-candidate overhead"). Standard library only.

A kernel of a real project imports far more than torch and triton: Liger-Kernel's package imports torch._dynamo,
transformers and peft, 5.2 s in every candidate's child on an H100 (s25), while the rest of a child's work takes 2.5 s.
The child of the baseline's first check names what its kernel's import loaded from the interpreter's installed
packages (`installed_imports` in its result); kopt keeps that list and the fork server imports those modules once,
before it forks, so that each child finds them in sys.modules.

Only installed modules are ever preloaded: a module whose file lies under the interpreter's standard library or
site-packages folders, never under the kernel's folder, the working folder or any other path entry. The server stays
unsealed, and these are the same kind of module it imports already (torch, triton): the kernel's own code and
whatever it keeps beside it are still imported by each sealed child alone. After preloading, the server must still be
safe to fork: no thread it started, no CUDA context (fork_safety()), and a child forked after it must still be able to
use the GPU (cuda_probe()); otherwise it does not serve.
"""

import collections
import importlib
import importlib.util
import os
import site
import sys
import sysconfig
import time

MAX_NAMES = 20000  # a list longer than any real import graph (torch alone is ~3,000 modules) is not a list of modules


def installed_roots():
    """The folders installed modules live in: the standard library's and the site-packages folders (real paths)."""
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p))
    try:
        roots.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:  # a virtualenv's old site module
        pass
    user = getattr(site, "getusersitepackages", lambda: None)()
    if user:
        roots.add(os.path.realpath(user))
    return sorted(roots)


def _under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def is_installed_file(path, roots, excluded=()):
    """True when `path` (a module's file or package folder) is under one of `roots` and under none of `excluded`
    (real paths, as installed_roots() gives them)."""
    if not path:
        return False
    real = os.path.realpath(path)
    return _under(real, roots) and not _under(real, excluded)


def new_installed(before, excluded=(), roots=None):
    """The modules in sys.modules, in the order they were imported, that are not in `before` and whose file is an
    installed one (is_installed_file): what an import between the two moments loaded from installed packages."""
    roots = installed_roots() if roots is None else roots
    excluded = [os.path.realpath(e) for e in excluded]
    out = []
    for name, mod in list(sys.modules.items()):
        if name in before or mod is None:
            continue
        f = getattr(mod, "__file__", None)
        if f is None:  # a namespace package: every folder it spans must be installed
            paths = list(getattr(mod, "__path__", []) or [])
            if paths and all(is_installed_file(p, roots, excluded) for p in paths):
                out.append(name)
            continue
        if is_installed_file(f, roots, excluded):
            out.append(name)
    return out


def _spec_is_installed(spec, roots):
    if spec is None:
        return False
    if spec.origin in ("built-in", "frozen"):
        return True
    if spec.origin:
        return is_installed_file(spec.origin, roots)
    locs = list(spec.submodule_search_locations or [])
    return bool(locs) and all(is_installed_file(p, roots) for p in locs)


def import_installed(names, roots=None):
    """Imports each of `names` whose every package on the way resolves to an installed file, checked before anything
    of it runs (a name that resolves elsewhere, e.g. shadowed by a module in the working folder, is skipped with all
    below it). Returns (imported, skipped): counts; a module whose import fails is skipped (the child will meet the
    same failure, and report it, as it would without the server)."""
    roots = installed_roots() if roots is None else roots
    imported = skipped = 0
    for name in list(names)[:MAX_NAMES]:
        if not isinstance(name, str) or not name or name in sys.modules:
            continue
        ok = True
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in sys.modules:
                continue
            try:  # what the import system would load (its parents are imported already, above)
                spec = importlib.util.find_spec(prefix)
            except (ImportError, ValueError):
                spec = None
            if not _spec_is_installed(spec, roots):
                ok = False
                break
            try:
                importlib.import_module(prefix)
            except Exception:  # noqa: BLE001 (anything a module raises while it is imported)
                ok = False
                break
        if ok:
            imported += 1
        else:
            skipped += 1
    return imported, skipped


def read_names(path):
    """The module names of a preload file (one a line); raises OSError when it cannot be read."""
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")][:MAX_NAMES]


def threads():
    """This process's threads: {task id: its name (/proc/self/task/ID/comm)}; empty where /proc cannot say."""
    out = {}
    try:
        ids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in ids:
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8", errors="replace") as f:
                out[tid] = f.read().strip()
        except OSError:
            out[tid] = "?"  # it ended meanwhile
    return out


def thread_count():
    """This process's threads (its tasks in /proc), or 1 where /proc cannot say."""
    return len(threads()) or 1


# Threads a preload may leave running, by name, each with why a fork stays safe beside it.
FORK_SAFE_THREADS = {
    # jemalloc (bundled by some installed packages) purges memory from a background thread; its own pthread_atfork
    # handlers hold its locks across the fork, and the child starts the thread again when it needs it.
    "jemalloc_bg_thd": "jemalloc's background thread",
}


def fork_safety(threads_before):
    """None when this process can still fork children safely after a preload, else why not: the preload started a
    thread (`threads_before`: threads() before it, or their count; a lock such a thread holds at the fork stays held in
    the child; the threads of the default imports, OpenBLAS's among them, the server forks with as it always has), or
    it made a CUDA context (a forked child cannot use it). The new threads are named by their names (Linux's comm),
    the most frequent first: what a user needs to find the module that started them. A thread FORK_SAFE_THREADS names
    is not counted."""
    now = threads()
    if isinstance(threads_before, dict):
        new = [name for tid, name in now.items() if tid not in threads_before and name not in FORK_SAFE_THREADS]
    else:
        new = ["?"] * max(0, (len(now) or 1) - threads_before)
    if new:
        counts = sorted(collections.Counter(new).items(), key=lambda kv: (-kv[1], kv[0]))
        named = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts)
        return f"{len(new)} thread(s) started by the preload ({named})"
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None) if torch is not None else None
    try:
        if cuda is not None and cuda.is_initialized():
            return "a CUDA context after the preload"
    except Exception:  # noqa: BLE001
        pass
    return None


def _gpu_present():
    """True when this machine shows an NVIDIA GPU that CUDA_VISIBLE_DEVICES leaves visible."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return any(os.path.exists(f"/dev/nvidia{i}") for i in range(64))


def cuda_probe(timeout_s=60.0):
    """None when a child forked now can still use CUDA (or no child here would), else why not. A module that asks the
    CUDA runtime anything while it is imported (torch.cuda.is_available() calls cuInit) leaves no CUDA context behind,
    so fork_safety() cannot see it, but a child forked after it cannot use CUDA: a child forked here tries (a tensor made
    on the GPU and synchronised), before the server serves any."""
    torch = sys.modules.get("torch")
    if torch is None or not _gpu_present() or os.environ.get("KOPT_TRITON_DEVICE", "cuda") != "cuda":
        return None
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if torch.cuda.is_available():
                torch.ones(1, device="cuda").add_(1)
                torch.cuda.synchronize()
                code = 0
            else:
                code = 2  # a GPU this machine shows, which CUDA no longer finds
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(status)
            return None if rc == 0 else f"a child forked after the preload cannot use CUDA (probe exit {rc})"
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return f"a child forked after the preload did not finish a CUDA call in {timeout_s:.0f} s"
        time.sleep(0.02)
