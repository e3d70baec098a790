"""Expected outputs out of a Triton candidate's reach (sealed.py, docs/GATES.md "The sealed seed"), on the CPU: the
Landlock seal of a Python process, the judge client against kopt's own `kopt __judge` (build/kopt), the sealed check
of the Triton runner with numpy buffers (right, wrong there, unwritten there, no sealed seed, no judge, paired), and
whole runs through `python3 -m kopt_harness triton-run` and the fork server, sealed, with a kernel that reads the
answer key."""

import fcntl
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from triton_support import CORRECT, PYTHON_DIR, VECADD_REF, VECADD_SETUP, TritonHarness

from kopt_harness import sealed, triton_golden

ROOT = os.path.dirname(PYTHON_DIR)


def kopt_binary():
    for c in (os.environ.get("KOPT_BIN"), os.path.join(ROOT, "build", "kopt"), os.path.join(ROOT, ".carry", "build", "kopt")):
        if c and os.access(c, os.X_OK):
            return c
    pytest.skip("no kopt binary (build/kopt): the judge is kopt's")
    return None


def landlock_abi():
    import ctypes  # noqa: PLC0415

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(ctypes.c_long(444), None, ctypes.c_long(0), ctypes.c_long(1))


needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available on this kernel")


class Sealed(TritonHarness):
    """Golden data with a sealed seed beneath its own cache folder (KOPT_CACHE_DIR), and the judge's environment."""

    def __init__(self, root):
        super().__init__(root, device="numpy")
        # Beside the test's folder, not in it: nothing new can be made directly in a folder above the sealed root.
        self.cache = root.parent / (root.name + "-cache")
        self.env = dict(os.environ, KOPT_CACHE_DIR=str(self.cache))

    def golden(self, kernel, sealed_seed=True, **kw):
        if sealed_seed:
            kw["sealed_dir"] = os.path.join(sealed.sealed_root(self.env), secrets.token_hex(16))
        return super().golden(kernel, **kw)

    def judge(self):
        return sealed.JudgeClient.spawn(kopt_binary(), self.env)


@pytest.fixture
def sh(tmp_path):
    return Sealed(tmp_path)


@pytest.fixture
def judge(sh):
    j = sh.judge()
    yield j
    j.close()


# A kernel that answers from the golden files it can open beneath SEARCH (the public seeds, and the sealed seed when
# the seal is off); inputs it finds in no file get zeros (or, with UNWRITTEN, nothing). What it could not open goes to
# REPORT.
ANSWER_KEY = """
import glob, json, os, struct
import numpy as np

CALLS = []
SEARCH, REPORT, UNWRITTEN = SEARCH_DIRS, REPORT_FILE, UNWRITTEN_FLAG

def _tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header, base = json.loads(data[8:8 + n]), 8 + n
    return {k: np.frombuffer(data[base + v["data_offsets"][0]:base + v["data_offsets"][1]], dtype=np.float32)
            for k, v in header.items() if k != "__metadata__"}

""" + VECADD_SETUP + """
def run_kernel(*, x, y, out, n, alpha, BLOCK=128, **config):
    CALLS.append(dict(config, BLOCK=BLOCK))
    found, denied = [], []
    for d in SEARCH:
        for p in sorted(glob.glob(os.path.join(d, "**", "*.safetensors"), recursive=True)):
            try:
                found.append(_tensors(p))
            except OSError as e:
                denied.append([p, e.errno])
    if REPORT:
        with open(REPORT, "w") as f:
            json.dump({"read": len(found), "denied": denied}, f)
    for t in found:
        if "in.x" in t and np.array_equal(t["in.x"], x):
            out[:] = t["out.out"]
            return
    if not UNWRITTEN:
        out[:] = 0
"""


def answer_key_kernel(sh, search, report=None, unwritten=False):
    text = (ANSWER_KEY.replace("SEARCH_DIRS", repr([str(s) for s in search]))
            .replace("REPORT_FILE", repr(str(report) if report else None)).replace("UNWRITTEN_FLAG", repr(unwritten)))
    return sh.kernel(text=text)


# --- the seal -----------------------------------------------------------------------------------------------------

@needs_landlock
def test_a_sealed_process_and_its_children_cannot_open_what_lies_beneath_the_sealed_folder(tmp_path):
    secret = tmp_path / "cache" / "sealed" / "tok"
    secret.mkdir(parents=True)
    (secret / "seed.safetensors").write_text("the answers")
    (tmp_path / "cache" / "golden").mkdir()
    (tmp_path / "cache" / "golden" / "seed_0.safetensors").write_text("public")
    script = f"""
import json, os, subprocess, sys
from kopt_harness import sealed
st = sealed.seal_away({str(tmp_path / "cache" / "sealed")!r})
out = {{"state": st}}
def tryread(p):
    try:
        return open(p).read()
    except OSError as e:
        return "errno %d" % e.errno
out["secret"] = tryread({str(secret / "seed.safetensors")!r})
out["public"] = tryread({str(tmp_path / "cache" / "golden" / "seed_0.safetensors")!r})
out["child"] = subprocess.run(["cat", {str(secret / "seed.safetensors")!r}], capture_output=True, text=True).returncode
try:
    os.rename({str(secret)!r}, {str(tmp_path / "moved")!r}); out["moved"] = True
except OSError:
    out["moved"] = False
print(json.dumps(out))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["state"]["sealed"] and out["state"]["landlock_abi"] >= 1 and "off_reason" not in out["state"]
    assert out["secret"] == "errno 13" and out["child"] != 0 and not out["moved"]
    assert out["public"] == "public"  # everything else stays as it was
    assert (secret / "seed.safetensors").read_text() == "the answers"  # this process was not sealed


def test_a_tmpdir_that_is_an_ancestor_of_the_sealed_folder_is_replaced_by_one_beside_it(tmp_path):
    # KOPT_CACHE_DIR under TMPDIR (a test's cache, or a user's under /tmp): TMPDIR is an ancestor of the sealed folder.
    root = str(tmp_path / "cache" / "sealed")
    alt = sealed._prepare_tmpdir({"TMPDIR": str(tmp_path)}, root)
    assert alt == str((tmp_path / "cache" / "tmp").resolve()) and os.path.isdir(alt)
    # /tmp too (a process whose TMPDIR is unset makes its files there): a cache under /tmp gets one whatever TMPDIR says.
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert sealed._prepare_tmpdir({"TMPDIR": str(other)}, root) == alt
    # A cache outside both: nothing to do (the home cache, or beside these tests where HOME itself is under /tmp).
    outside = [p for p in (pathlib.Path(os.path.expanduser("~/.cache")), pathlib.Path(__file__).resolve().parent)
               if not str(p.resolve()).startswith(("/tmp/", tempfile.gettempdir() + "/"))]
    if not outside:
        pytest.skip("both HOME and this checkout are under /tmp: no folder outside it to try")
    home = outside[0] / f"kopt-tmpdir-test-{os.getpid()}"
    try:
        assert sealed._prepare_tmpdir({"TMPDIR": str(other)}, str(home / "cache" / "sealed")) is None
        assert not (home / "cache" / "tmp").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)


@needs_landlock
def test_a_fork_server_child_keeps_the_sealed_tmpdir_when_it_takes_its_clients_environment(tmp_path):
    # What the fork server's child does: sealed.start() from the server's environment, then the client's environment
    # in its place (no TMPDIR: gcc then writes to /tmp, an ancestor of the sealed folder here, and aborted on the
    # H200); apply_tmpdir() puts the sealed child's TMPDIR back.
    script = f"""
import json, os, subprocess, sys
from kopt_harness import sealed
s = sealed.start({{"KOPT_CACHE_DIR": {str(tmp_path / "cache")!r}, "TMPDIR": {str(tmp_path)!r}, "KOPT_EXE": ""}})
path = os.environ["PATH"]
os.environ.clear()
os.environ.update({{"PATH": path}})
if sys.argv[1] == "apply":
    sealed.apply_tmpdir(os.environ)
r = subprocess.run(["mktemp"], capture_output=True, text=True)
print(json.dumps({{"sealed": s.seal["sealed"], "tmpdir": s.tmpdir, "mktemp": r.returncode, "made": r.stdout.strip()}}))
"""
    for how, ok in (("apply", True), ("without", False)):
        p = subprocess.run([sys.executable, "-c", script, how], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert out["sealed"] and out["tmpdir"] == str((tmp_path / "cache" / "tmp").resolve()), out
        assert (out["mktemp"] == 0) == ok, (how, out)
        if ok:
            assert out["made"].startswith(out["tmpdir"] + "/"), out


@needs_landlock
def test_a_sealed_process_whose_cache_lies_under_tmpdir_can_still_make_temporary_files(tmp_path):
    # What Triton's JIT does on a cold cache: gcc makes its intermediate files in TMPDIR. Sealed without the TMPDIR
    # beside the sealed folder, that fails (an ancestor takes no new entry); with it (start()'s order), it works.
    script = f"""
import json, os, subprocess
from kopt_harness import sealed
root = {str(tmp_path / "cache" / "sealed")!r}
env = {{"TMPDIR": {str(tmp_path)!r}}}
alt = sealed._prepare_tmpdir(env, root) if os.environ.get("USE_ALT") else None
st = sealed.seal_away(root)
tmp = alt or {str(tmp_path)!r}
r = subprocess.run(["mktemp", "-p", tmp], capture_output=True, text=True)
print(json.dumps({{"sealed": st["sealed"], "mktemp": r.returncode}}))
"""
    for use_alt, want in (("", False), ("1", True)):
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=PYTHON_DIR, USE_ALT=use_alt))
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert out["sealed"]
        assert (out["mktemp"] == 0) == want, (use_alt, out)


def test_the_sealed_root_is_kopts_cache_folder():
    assert sealed.sealed_root({"KOPT_CACHE_DIR": "/c"}) == "/c/sealed"
    assert sealed.sealed_root({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == "/x/kopt/sealed"
    assert sealed.sealed_root({"HOME": "/h"}) == "/h/.cache/kopt/sealed"
    assert sealed.sealed_token({"sealed": {"token": "0a" * 16}}) == "0a" * 16
    assert sealed.sealed_token({"sealed": {"token": "../x"}}) is None and sealed.sealed_token({}) is None


# --- the judge client against kopt's judge --------------------------------------------------------------------------

def test_the_judge_hands_out_the_sealed_inputs_and_judges_outputs_without_revealing_them(sh, judge):
    _, golden = sh.golden(sh.kernel(), seeds=2)
    inputs = judge.inputs(golden)
    assert sorted(inputs) == ["x", "y"] and all(len(v) == 4000 for v in inputs.values())
    x, y = (np.frombuffer(inputs[k], dtype=np.float32) for k in ("x", "y"))
    public = np.frombuffer(open(os.path.join(golden, "seed_0.safetensors"), "rb").read(), dtype=np.uint8)
    assert inputs["x"] not in public.tobytes()  # a new seed, not one of the public ones
    right = (2.0 * x + y).astype(np.float32)
    v = judge.judge(golden, 1e-4, 1e-4, {"out": right.view(np.uint8)})
    assert v["status"] == "ok" and v["outputs"]["out"]["ok"]
    wrong = right.copy()
    wrong[7] += 1
    v = judge.judge(golden, 1e-4, 1e-4, {"out": wrong.view(np.uint8)})
    assert v["status"] == "wrong_result" and "first bad index 7" in v["message"]
    assert "expected" not in v["outputs"]["out"] and "expected_at_first_bad" not in v["outputs"]["out"]
    poison = np.full(4000, 0xFF, dtype=np.uint8)
    assert judge.judge(golden, 1e-4, 1e-4, {"out": poison})["status"] == "unwritten_output"
    assert judge.judged == 3


def test_a_judge_consulted_by_someone_else_is_caught_by_the_count(sh, judge):
    _, golden = sh.golden(sh.kernel())
    x, y = (np.frombuffer(judge.inputs(golden)[k], dtype=np.float32) for k in ("x", "y"))
    judge.judged += 1  # as if another request had reached the judge on this socket
    with pytest.raises(sealed.JudgeError, match="something else in this process consulted it"):
        judge.judge(golden, 1e-4, 1e-4, {"out": (2 * x + y).astype(np.float32).view(np.uint8)})


def test_a_golden_folder_without_a_sealed_seed_is_an_error_of_the_judge(sh, judge):
    _, golden = sh.golden(sh.kernel(), sealed_seed=False)
    with pytest.raises(sealed.JudgeError, match="has no sealed seed"):
        judge.inputs(golden)


def test_no_kopt_executable_no_judge():
    with pytest.raises(sealed.JudgeError, match="KOPT_EXE"):
        sealed.JudgeClient.spawn("")


# --- the Triton runner's sealed check (numpy buffers; this process is not sealed) ------------------------------------

def test_a_right_kernel_passes_the_sealed_seed_judged_by_the_judge(sh, judge):
    kernel = sh.kernel()
    _, golden = sh.golden(kernel, seeds=2)
    r, rc = sh.run(kernel, golden, sealing=sealed.Sealing(judge=judge))
    assert rc == 0 and r["status"] == "ok", r["message"]
    assert [s["seed"] for s in r["seeds"]] == [0, 1, -1]
    s = r["seeds"][-1]
    assert s["sealed"] is True and s["checked_on"] == "judge" and s["outputs"]["out"]["ok"]
    assert s["inputs"]["x"]["unchanged"] and r["seeds"][0]["checked_on"] == "host"
    key = r["answer_key"]
    assert key["sealed_seed"] and key["judge"] and not key["out_of_reach"]  # this test process is not sealed
    assert key["reason"].startswith("the sealed seed is on disk where the candidate could open it")


def test_a_kernel_that_answers_from_the_public_golden_files_is_wrong_on_the_sealed_seed(sh, judge):
    kernel = answer_key_kernel(sh, [sh.root])
    _, golden = sh.golden(kernel, seeds=3)
    r, rc = sh.run(kernel, golden, sealing=sealed.Sealing(judge=judge))
    assert r["status"] == "wrong_on_sealed_seed" and rc == 0  # a verdict, not a failure of the runner
    assert r["message"].startswith("on the sealed seed: output out: MISMATCH")
    assert [s["seed"] for s in r["seeds"]] == [0, 1, 2, -1]
    assert all(s["outputs"]["out"]["ok"] for s in r["seeds"][:3])  # right on every public seed
    r, _ = sh.run(kernel, golden, mode="time", sealing=sealed.Sealing(judge=judge))
    assert r["status"] == "wrong_on_sealed_seed" and "samples_ms" not in r  # checked before it is timed


def test_each_case_checked_in_the_timed_child_is_judged_on_its_own_sealed_seed(sh, judge):
    kernel = sh.kernel()
    _, golden = sh.golden(kernel, seeds=2)
    _, small = sh.golden(kernel, dims={"n": 600}, seeds=2)
    r, rc = sh.run(kernel, golden, mode="time", also_check=[small], sealing=sealed.Sealing(judge=judge))
    assert rc == 0 and r["status"] == "ok", r["message"]
    (case,) = r["cases"]
    assert case["status"] == "ok" and [s["seed"] for s in case["seeds"]] == [0, 1, -1]
    assert case["seeds"][-1]["sealed"] is True and case["seeds"][-1]["checked_on"] == "judge"
    assert case["answer_key"]["sealed_seed"] and case["answer_key"]["judge"]


def test_outputs_left_unwritten_on_the_sealed_seed_are_unwritten_output(sh, judge):
    kernel = answer_key_kernel(sh, [sh.root], unwritten=True)
    _, golden = sh.golden(kernel)
    r, _ = sh.run(kernel, golden, sealing=sealed.Sealing(judge=judge))
    assert r["status"] == "unwritten_output" and r["message"].startswith("on the sealed seed: ")
    assert r["seeds"][-1]["outputs"]["out"]["still_poisoned"] == 1000


def test_each_paired_configuration_is_judged_on_the_sealed_seed(sh, judge):
    cheat = "if BLOCK == 64:\n        out[:] = 0\n        return\n    " + CORRECT
    kernel = sh.kernel(cheat)
    _, golden = sh.golden(kernel)
    # BLOCK 64 is wrong everywhere; only the sealed check of each configuration is of interest here
    r, _ = sh.run(kernel, golden, mode="paired", configs=[{"BLOCK": 128}, {"BLOCK": 256}], rounds=2,
                  sealing=sealed.Sealing(judge=judge))
    assert r["status"] == "ok", r["message"]
    assert [lib["check"]["sealed_seed"]["checked_on"] for lib in r["libs"]] == ["judge", "judge"]
    assert all(lib["check"]["sealed_seed"]["seed"] == -1 for lib in r["libs"]) and judge.judged == 2
    kernel = answer_key_kernel(sh, [sh.root])
    _, golden = sh.golden(kernel)
    r, _ = sh.run(kernel, golden, mode="paired", configs=[{"BLOCK": 128}, {"BLOCK": 64}], rounds=2,
                  sealing=sealed.Sealing(judge=judge))
    assert r["status"] == "wrong_on_sealed_seed"
    assert r["message"].startswith("configuration 0 {'BLOCK': 128}: on the sealed seed: output out: MISMATCH")


def test_golden_data_without_a_sealed_seed_skips_the_check_and_says_why(sh, judge):
    kernel = sh.kernel()
    _, golden = sh.golden(kernel, sealed_seed=False)
    r, rc = sh.run(kernel, golden, sealing=sealed.Sealing(judge=judge))
    assert rc == 0 and r["status"] == "ok" and all(s["seed"] >= 0 for s in r["seeds"])
    assert r["answer_key"]["sealed_seed"] is False and r["answer_key"]["out_of_reach"] is False
    assert r["answer_key"]["reason"] == sealed.NO_SEALED_SEED
    assert judge.judged == 0


def test_no_judge_skips_the_check_and_says_why(sh):
    kernel = sh.kernel()
    _, golden = sh.golden(kernel)
    r, rc = sh.run(kernel, golden, sealing=sealed.Sealing(judge_error="kopt's executable is not known"))
    assert rc == 0 and r["status"] == "ok" and [s["seed"] for s in r["seeds"]] == [0, 1]
    assert r["answer_key"]["judge"] is False
    assert r["answer_key"]["reason"] == "no judge process: kopt's executable is not known"
    r, _ = sh.run(kernel, golden)  # nothing started in this process (not run as the harness's triton-run)
    assert r["answer_key"]["reason"].startswith("no judge process: no judge was started in this process")


# --- whole runs: sealed, as kopt starts them -----------------------------------------------------------------------

def sealed_run(sh, kernel, golden, module="kopt_harness", env=None):
    out = str(sh.root / f"result_{module}.json")
    e = dict(sh.env, KOPT_EXE=kopt_binary(), **(env or {}))
    p = sh.cli("triton-run", "--kernel", kernel, "--golden", golden, "--out", out, "--device", "numpy",
               env=e, module=module)
    return p, (sh.read(out) if os.path.exists(out) else None)


@needs_landlock
def test_the_harness_seals_itself_before_the_kernel_and_the_answer_key_stays_out_of_reach(sh):
    report = sh.root / "report.json"
    kernel = answer_key_kernel(sh, [sh.root, sh.cache], report)  # the golden folders and kopt's cache, sealed seed too
    _, golden = sh.golden(kernel, seeds=2)
    p, r = sealed_run(sh, kernel, golden)
    assert r is not None, p.stderr
    assert r["status"] == "wrong_on_sealed_seed", (r["message"], p.stderr)
    key = r["answer_key"]
    assert key == {"sealed_seed": True, "judge": True, "out_of_reach": True,
                   "landlock": {"sealed": True, "landlock_abi": key["landlock"]["landlock_abi"], "signals_scoped":
                                key["landlock"]["signals_scoped"]}}
    denied = json.loads(report.read_text())["denied"]
    assert [d[1] for d in denied] == [13] and "/sealed/" in denied[0][0]  # it looked, and could not open it
    # The seal off (a diagnostic): the same kernel reads the sealed seed and passes; the result says so.
    p, r = sealed_run(sh, kernel, golden, env={"KOPT_SEAL": "off"})
    assert r["status"] == "ok" and r["answer_key"]["out_of_reach"] is False
    assert r["answer_key"]["reason"] == "no judge process: turned off by KOPT_SEAL=off"


@needs_landlock
def test_a_right_kernel_passes_sealed(sh):
    kernel = sh.kernel()
    _, golden = sh.golden(kernel)
    p, r = sealed_run(sh, kernel, golden)
    assert r is not None and r["status"] == "ok", p.stderr
    assert r["answer_key"]["out_of_reach"] is True and r["seeds"][-1]["sealed"] is True


@pytest.fixture
def server_dir():
    sockdir = pathlib.Path(tempfile.mkdtemp(prefix="kfs-", dir="/tmp")) / "s"  # a Unix socket's path is short
    yield sockdir
    for sock in sockdir.glob("*.sock") if sockdir.exists() else []:  # stop the test's server
        try:
            os.kill(int(open(str(sock) + ".pid").read()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
    shutil.rmtree(sockdir.parent, ignore_errors=True)


@needs_landlock
def test_every_child_of_the_fork_server_is_sealed_and_the_server_is_not(sh, server_dir):
    report = sh.root / "report.json"
    kernel = answer_key_kernel(sh, [sh.root, sh.cache], report)
    _, golden = sh.golden(kernel, seeds=2)
    env = {"KOPT_TRITON_FORK_SERVER_DIR": str(server_dir), "KOPT_TRITON_FORK_SERVER_IDLE_S": "20"}
    for _ in range(2):  # the second request is served by the same server, and sealed again
        p, r = sealed_run(sh, kernel, golden, module="kopt_harness.fork_client", env=env)
        assert r is not None, p.stderr
        assert r["status"] == "wrong_on_sealed_seed" and r["answer_key"]["out_of_reach"] is True, p.stderr
        assert [d[1] for d in json.loads(report.read_text())["denied"]] == [13]
    pid = int(next(server_dir.glob("*.sock.pid")).read_text())
    status = open(f"/proc/{pid}/status").read()
    # The server itself stays unsealed (Landlock shows no domain in /proc; the server can still read the file).
    assert "NoNewPrivs:\t0" in status
    # A request of any kind is sealed: the child seals before it reads the request's arguments.
    probe, seen = sh.root / "probe_ref.py", sh.root / "seen.txt"
    probe.write_text(f"""import glob
try:
    open(glob.glob({str(sh.cache)!r} + '/sealed/*/seed.safetensors')[0], 'rb').read()
    open({str(seen)!r}, 'w').write('read')
except OSError:
    open({str(seen)!r}, 'w').write('denied')
def reference(**_):
    pass
""")
    p = sh.cli("check", "--ref", str(probe), "--triton-kernel", sh.kernel(), "--dims", '{"n": 10}',
               env=dict(sh.env, KOPT_EXE=kopt_binary(), **env), module="kopt_harness.fork_client")
    assert seen.read_text() == "denied", p.stderr


# --- the ephemeral seed (docs/GATES.md "The ephemeral seed"): Triton candidates too ---------------------------------

def _memfd_links(pid="self"):
    """The ephemeral seeds' memfds a process holds (by the name the harness gives them)."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if "kopt-ephemeral-seed" in link:
            out.append(link)
    return out


def golden_with_ref(sh, kernel, dims, seeds=2):
    """Golden data with a sealed seed, and the ref.py it was made from."""
    ref = sh.write("ref.py", VECADD_REF)
    out = str(sh.root / f"golden{sh.count}")
    triton_golden.generate(triton_golden.TritonOptions(
        kernel=kernel, ref=ref, dims=dims, seeds=seeds, out=out,
        sealed_dir=os.path.join(sealed.sealed_root(sh.env), secrets.token_hex(16))))
    return ref, out


def make_ephemeral(sh, kernel, ref, dims, seeds=2):
    """The ephemeral seed as kopt has the harness make it (`golden --triton-kernel ... --ephemeral-socket FD`): the
    sealed memfd it sends, and its summary line."""
    ours, theirs = socket.socketpair()
    try:
        p = subprocess.run([sys.executable, "-m", "kopt_harness", "golden", "--triton-kernel", kernel, "--ref", ref,
                            "--dims", json.dumps(dims), "--seeds", str(seeds), "--out", str(sh.root / "never_made"),
                            "--ephemeral-socket", str(theirs.fileno())],
                           pass_fds=[theirs.fileno()], env=dict(sh.env, PYTHONPATH=PYTHON_DIR), capture_output=True,
                           text=True, cwd=str(sh.root), timeout=120)
        assert p.returncode == 0, p.stderr
        _, fds, _, _ = socket.recv_fds(ours, 1, 1)
    finally:
        ours.close()
        theirs.close()
    assert len(fds) == 1
    return fds[0], json.loads(p.stdout)


def ephemeral_run(sh, kernel, golden, fd, module="kopt_harness", env=None, mode="check", exe=True):
    """`triton-run --ephemeral-fd FD`, the descriptor inherited, as kopt's one-shot check run starts it."""
    out = str(sh.root / f"eph_{module}_{secrets.token_hex(4)}.json")
    e = dict(sh.env, PYTHONPATH=PYTHON_DIR, **(env or {}))
    if exe:
        e["KOPT_EXE"] = kopt_binary()
    p = subprocess.run([sys.executable, "-m", module, "triton-run", "--kernel", kernel, "--golden", golden, "--out", out,
                        "--device", "numpy", "--mode", mode, "--ephemeral-fd", str(fd)],
                       pass_fds=[fd] if fd > 2 else [], env=e, capture_output=True, text=True, cwd=str(sh.root),
                       timeout=300, stdin=subprocess.DEVNULL)
    return p, (sh.read(out) if os.path.exists(out) else None)


def test_only_a_memfd_is_a_memfd_not_every_file_that_answers_for_seals():
    fd = os.memfd_create("kopt-is-memfd-test", os.MFD_ALLOW_SEALING)
    try:
        assert sealed.is_memfd(fd)
    finally:
        os.close(fd)
    assert not sealed.is_memfd(fd)  # closed
    r, w = os.pipe()
    try:
        assert not sealed.is_memfd(r)
    finally:
        os.close(r)
        os.close(w)
    # A tmpfs file answers F_GET_SEALS as a memfd does; a CI machine's /dev/null, a regular file on devtmpfs, did.
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    with tempfile.NamedTemporaryFile(dir="/dev/shm") as f:
        try:
            fcntl.fcntl(f.fileno(), fcntl.F_GET_SEALS)
        except OSError:
            pytest.skip("this /dev/shm does not answer F_GET_SEALS: nothing to tell apart")
        assert not sealed.is_memfd(f.fileno())


def test_the_ephemeral_fd_option_is_read_from_the_command_line():
    assert sealed.ephemeral_fd_in(["--kernel", "k.py", "--ephemeral-fd", "7"]) == 7
    assert sealed.ephemeral_fd_in(["--ephemeral-fd=9", "--mode", "check"]) == 9
    assert sealed.ephemeral_fd_in(["--kernel", "k.py"]) is None
    assert sealed.ephemeral_fd_in(["--ephemeral-fd", "x"]) is None  # argparse says what is wrong
    assert sealed.ephemeral_fd_in(["--ephemeral-fd", "-1"]) is None
    assert sealed.ephemeral_fd_in(["--ephemeral-fd"]) is None


def test_a_triton_kernels_ephemeral_seed_is_made_in_memory_only(sh):
    import fcntl  # noqa: PLC0415

    from safetensors.numpy import load as load_bytes  # noqa: PLC0415

    kernel = sh.kernel()
    ref, golden = golden_with_ref(sh, kernel, {"n": 1000})
    before = sorted(str(p) for p in sh.root.rglob("*")) + sorted(str(p) for p in sh.cache.rglob("*"))
    fd, summary = make_ephemeral(sh, kernel, ref, {"n": 1000})
    try:
        assert summary["status"] == "ok" and summary["ephemeral"] is True and summary["kernel_backend"] == "triton"
        assert "seed" not in summary and summary["not_dumpable"] is True
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        for s in (fcntl.F_SEAL_SHRINK, fcntl.F_SEAL_GROW, fcntl.F_SEAL_WRITE, fcntl.F_SEAL_SEAL):
            assert seals & s, "sealed for good"
        data = os.pread(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)
    t = load_bytes(data)
    assert set(t) == {"in.x", "in.y", "out.out"}, "setup()'s buffers, as the golden data's"
    np.testing.assert_allclose(t["out.out"], 2.0 * t["in.x"] + t["in.y"], rtol=1e-6)  # the reference ran on them
    after = sorted(str(p) for p in sh.root.rglob("*")) + sorted(str(p) for p in sh.cache.rglob("*"))
    assert [p for p in after if p not in before and "__pycache__" not in p] == [], "no file was written"
    for k in (0, 1):  # none of the public seeds
        public = np.random.default_rng(k).standard_normal(1000).astype(np.float32)
        assert not np.array_equal(public, t["in.x"])


# A right kernel that writes down, at its import and at each call, the ephemeral seeds' descriptors its process holds.
FD_SPY = """
import json, os
import numpy as np

REPORT = REPORT_FILE

def _held():
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if "kopt-ephemeral-seed" in link:
            out.append(link)
    return out

SEEN = {"import": _held(), "calls": []}

""" + VECADD_SETUP + """
def run_kernel(*, x, y, out, n, alpha, BLOCK=128, **config):
    SEEN["calls"].append(_held())
    with open(REPORT, "w") as f:
        json.dump(SEEN, f)
    out[:] = alpha * x + y
"""


@pytest.mark.parametrize("module", ["kopt_harness", "kopt_harness.fork_client"])
def test_a_triton_check_run_judges_the_ephemeral_seed_and_its_process_never_holds_it(sh, server_dir, module):
    report = sh.root / "spy.json"
    kernel = sh.kernel(text=FD_SPY.replace("REPORT_FILE", repr(str(report))))
    ref, golden = golden_with_ref(sh, kernel, {"n": 1000})
    fd, _ = make_ephemeral(sh, kernel, ref, {"n": 1000})
    env = {"KOPT_TRITON_FORK_SERVER_DIR": str(server_dir), "KOPT_TRITON_FORK_SERVER_IDLE_S": "20"}
    try:
        p, r = ephemeral_run(sh, kernel, golden, fd, module=module, env=env)
    finally:
        os.close(fd)
    assert r is not None, p.stderr
    assert r["status"] == "ok", (r["message"], p.stderr)
    assert [s["seed"] for s in r["seeds"]] == [0, 1, sealed.EPHEMERAL_SEED_ID]
    last = r["seeds"][-1]
    assert last["ephemeral"] is True and "sealed" not in last and last["checked_on"] == "judge"
    assert "expected_at_first_bad" not in json.dumps(last), "the judge tells no expected value"
    key = r["answer_key"]
    assert key["ephemeral_seed"] is True and key["judge"] is True and key["out_of_reach"] is True, key
    seen = json.loads(report.read_text())
    assert seen["import"] == [] and seen["calls"] == [[], [], []], "the descriptor was closed before the kernel came"
    if module == "kopt_harness.fork_client":
        assert "refused" not in p.stderr and "running here" not in p.stderr, p.stderr  # the server's child ran it
        pid = int(next(server_dir.glob("*.sock.pid")).read_text())
        try:
            assert _memfd_links(pid) == [], "the server closed its copy after the fork"
        except PermissionError:
            pass  # not dumpable, and this test is not root: nobody else can look either


@pytest.mark.parametrize("module", ["kopt_harness", "kopt_harness.fork_client"])
def test_an_answer_key_reader_that_reaches_the_sealed_seed_is_caught_by_the_ephemeral_seed(sh, server_dir, module):
    kernel = answer_key_kernel(sh, [sh.root, sh.cache])  # the golden folders and kopt's cache, sealed seed too
    ref, golden = golden_with_ref(sh, kernel, {"n": 1000})
    env = {"KOPT_SEAL": "off", "KOPT_TRITON_FORK_SERVER_DIR": str(server_dir), "KOPT_TRITON_FORK_SERVER_IDLE_S": "20"}
    # The seal off (as on a kernel without Landlock): the answer key within its reach, it passes.
    p, r = sealed_run(sh, kernel, golden, module=module, env=env)
    assert r is not None and r["status"] == "ok", p.stderr
    assert r["answer_key"]["out_of_reach"] is False
    fd, _ = make_ephemeral(sh, kernel, ref, {"n": 1000})
    try:
        p, r = ephemeral_run(sh, kernel, golden, fd, module=module, env=env)
    finally:
        os.close(fd)
    assert r is not None, p.stderr
    assert r["status"] == "wrong_on_ephemeral_seed", (r["message"], p.stderr)
    assert p.returncode == 0  # a finished check, as `kopt __runner`'s
    assert r["message"].startswith("on the ephemeral seed: output out: MISMATCH"), r["message"]
    assert all(s["outputs"]["out"]["ok"] for s in r["seeds"][:2]), "right on every public seed"
    assert r["seeds"][-1]["seed"] == sealed.EPHEMERAL_SEED_ID and r["seeds"][-1]["ephemeral"] is True
    key = r["answer_key"]
    assert key["ephemeral_seed"] is True and key["out_of_reach"] is True, "never on disk: out of reach without the seal"
    assert key["landlock"]["off_reason"] == "turned off by KOPT_SEAL=off"


def test_an_ephemeral_check_that_cannot_judge_the_seed_fails_rather_than_passes(sh, server_dir):
    kernel = sh.kernel()
    ref, golden = golden_with_ref(sh, kernel, {"n": 100})
    fd, _ = make_ephemeral(sh, kernel, ref, {"n": 100})
    try:
        # No judge (kopt's executable unknown).
        p, r = ephemeral_run(sh, kernel, golden, fd, exe=False)
        assert r["status"] == "internal_error", p.stderr
        assert r["message"] == ("the ephemeral seed cannot be checked: no judge process: kopt's executable is not known "
                                "(KOPT_EXE is not set)"), r["message"]
        assert "seeds" not in r
        # Check mode only.
        p, r = ephemeral_run(sh, kernel, golden, fd, mode="time")
        assert p.returncode == 4 and "--ephemeral-fd is for --mode check" in p.stderr, p.stderr
        # Golden data the seed was not made for: the judge refuses it (its tensors do not fit the buffers).
        _, other = golden_with_ref(sh, kernel, {"n": 200})
        p, r = ephemeral_run(sh, kernel, other, fd)
        assert r["status"] == "internal_error" and "made for other golden data" in r["message"], r["message"]
    finally:
        os.close(fd)
    # A descriptor that is no memfd (stdin, /dev/null here) is refused, and left open; through the fork server's
    # client too (it sends none: the harness it runs itself says so, under the command line's number).
    for module in ("kopt_harness", "kopt_harness.fork_client"):
        p, r = ephemeral_run(sh, kernel, golden, 0, module=module, env={
            "KOPT_TRITON_FORK_SERVER_DIR": str(server_dir), "KOPT_TRITON_FORK_SERVER_IDLE_S": "20"})
        assert r["status"] == "internal_error", p.stderr
        assert "--ephemeral-fd 0 is not a memfd this process holds" in r["message"], r["message"]
    # A memfd not sealed for good: the judge refuses it.
    loose = os.memfd_create("kopt-ephemeral-seed-loose", os.MFD_ALLOW_SEALING)
    try:
        os.write(loose, b"not sealed")
        p, r = ephemeral_run(sh, kernel, golden, loose)
    finally:
        os.close(loose)
    assert r["status"] == "internal_error" and "not sealed for good" in r["message"], r["message"]


def test_the_fork_server_takes_a_fourth_descriptor_only_for_an_ephemeral_request():
    from kopt_harness import forkserver  # noqa: PLC0415

    def request(body, fds):
        a, b = socket.socketpair()
        try:
            payload = json.dumps(body).encode()
            socket.send_fds(a, [len(payload).to_bytes(4, "big") + payload], fds)
            return forkserver.read_request(b)
        finally:
            a.close()
            b.close()

    seed = os.memfd_create("kopt-ephemeral-seed-test")
    try:
        req, got = request({"argv": ["triton-run"], "ephemeral": True}, [0, 1, 2, seed])
        assert len(got) == 4 and os.readlink(f"/proc/self/fd/{got[3]}").startswith("/memfd:kopt-ephemeral-seed")
        for fd in got:
            os.close(fd)
        for body, fds in (({"argv": ["triton-run"], "ephemeral": True}, [0, 1, 2]),
                          ({"argv": ["triton-run"]}, [0, 1, 2, seed])):
            before = len(os.listdir("/proc/self/fd"))
            with pytest.raises(ValueError, match="four with"):
                request(body, fds)
            assert len(os.listdir("/proc/self/fd")) == before, "what it received is closed"
    finally:
        os.close(seed)
