"""`python3 -m kopt_harness` as kopt runs it: exit codes, stdout, tracebacks on stderr, inspect."""

import json
import os
import re
import subprocess
import sys
import time

import pytest
from conftest import PYTHON_DIR, VECADD

from kopt_harness import store

GOOD = """
shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}
def reference(*, a, b, c, n):
    print("chatty reference")   # must not reach stdout
    c[:] = a + b
"""


def golden_args(harness, ref_text, params=VECADD, dims='{"n": 16}', *extra):
    ref = harness.ref(ref_text)
    return ["golden", "--ref", ref, "--signature", harness.sig_file(params), "--dims", dims,
            "--out", harness.out(f"g{harness.count}"), "--seeds", "2", *extra]


def test_success_prints_one_json_line(harness):
    r = harness.cli(*golden_args(harness, GOOD))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    summary = json.loads(lines[0])
    assert summary["status"] == "ok" and summary["seeds"] == [0, 1] and summary["buffers"] == ["a", "b", "c"]
    assert "chatty reference" in r.stderr


@pytest.mark.parametrize("where,text", [
    ("importing ref.py", "import no_such_module_anywhere\ndef reference(**kw):\n    pass\n"),
    ("importing ref.py", "def reference(**kw)\n    pass\n"),  # a syntax error
    ("setup()", "def setup(*, seed, n):\n    raise RuntimeError('setup broke')\ndef reference(**kw):\n    pass\n"),
    ("reference()", "shapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\ndef helper(x):\n    return x / 0\n"
                    "def reference(*, a, b, c, n):\n    helper(1)\n"),
    ("workload_model()", GOOD + "def workload_model(*, n):\n    return {'flops': undefined_name}\n"),
])
def test_errors_inside_ref_py_exit_4_with_a_traceback(harness, where, text):
    r = harness.cli(*golden_args(harness, text))
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert r.stdout == ""
    assert f"kopt_harness: error in ref.py: {where} raised" in r.stderr
    assert "Traceback (most recent call last)" in r.stderr and "ref.py" in r.stderr


def test_reference_traceback_points_at_the_failing_line(harness):
    text = "shapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\ndef reference(*, a, b, c, n):\n    c[:] = a @ b @ b\n"
    r = harness.cli(*golden_args(harness, text))
    assert r.returncode == 4
    assert 'line 3, in reference' in r.stderr and "c[:] = a @ b @ b" in r.stderr


def test_sys_exit_inside_ref_py_is_its_error(harness):
    r = harness.cli(*golden_args(harness, "import sys\nsys.exit(0)\n"))
    assert r.returncode == 4 and "SystemExit" in r.stderr


@pytest.mark.parametrize("args,match", [
    (["golden", "--signature", "s.json", "--out", "o"], "--ref"),
    (["golden", "--ref", "nowhere.py", "--signature", "nowhere.json", "--out", "o"], "nowhere.json"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
def test_bad_usage_exits_4_naming_what_to_fix(harness, args, match):
    r = harness.cli(*args)
    assert r.returncode == 4 and match in r.stderr and "kopt_harness: error:" in r.stderr


def test_bad_dims_and_missing_ref(harness):
    r = harness.cli(*golden_args(harness, GOOD, VECADD, "{n: 3}"))
    assert r.returncode == 4 and "--dims is not valid JSON" in r.stderr
    args = golden_args(harness, GOOD)
    args[2] = args[2] + ".missing"
    r = harness.cli(*args)
    assert r.returncode == 4 and "no such file" in r.stderr


def test_ref_without_reference_function(harness):
    r = harness.cli(*golden_args(harness, "atol = 1e-3\n"))
    assert r.returncode == 4 and "defines no function reference" in r.stderr


def test_contract_violation_exits_4_without_a_traceback(harness):
    text = GOOD.replace('shapes = {"a": ("n",), "b": ("n",), "c": ("n",)}', 'shapes = {"a": ("n",)}')
    r = harness.cli(*golden_args(harness, text))
    assert r.returncode == 4 and "have no buffer" in r.stderr and "Traceback" not in r.stderr


def test_inspect_prints_manifest_and_tensor_shapes(harness):
    args = golden_args(harness, GOOD)
    assert harness.cli(*args).returncode == 0
    out_dir = args[args.index("--out") + 1]
    r = harness.cli("inspect", out_dir)
    assert r.returncode == 0, r.stderr
    assert '"version": 1' in r.stdout and "seed_1.safetensors" in r.stdout
    assert "out.c" in r.stdout and "[16]" in r.stdout
    r = harness.cli("inspect", out_dir, "--json")
    j = json.loads(r.stdout)
    assert [t["name"] for t in j["files"][0]["tensors"]] == ["in.a", "in.b", "out.c"]
    assert j["files"][0]["tensors"][2]["shape"] == [16] and j["files"][0]["tensors"][2]["nbytes"] == 64
    r = harness.cli("inspect", str(harness.root / "nothing"))
    assert r.returncode == 4 and "golden folder" in r.stderr


def test_golden_batch_makes_each_request_and_reports_each_in_order(harness):
    """`golden-batch`: one process, one summary line per request in order; a failing request is reported and the
    others are made all the same, as `golden` makes each alone."""
    good = golden_args(harness, GOOD)[1:]
    bad = golden_args(harness, GOOD, VECADD, '{"m": 3}')[1:]   # lacks the dimension n
    other = golden_args(harness, GOOD, VECADD, '{"n": 24}')[1:]
    requests = harness.out("requests.json")
    with open(requests, "w", encoding="utf-8") as f:
        json.dump([good, bad, other], f)
    r = harness.cli("golden-batch", "--requests", requests)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["status"] for x in lines] == ["ok", "error", "ok"]
    assert lines[1]["exit_code"] == 4 and "'n'" in lines[1]["message"]
    for args, n in ((good, 16), (other, 24)):
        out = args[args.index("--out") + 1]
        with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        assert manifest["dims"]["n"] == n
        alone = harness.cli("golden", *args[:args.index("--out")], "--out", out + "_alone", *args[args.index("--out") + 2:])
        assert alone.returncode == 0, alone.stderr
        for seed in ("seed_0.safetensors", "seed_1.safetensors"):
            a, b = (store.read_tensors(os.path.join(d, seed)) for d in (out, out + "_alone"))
            assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)


@pytest.mark.parametrize("text", ["not json", '{"a": 1}', '[["--ref", 3]]'])
def test_golden_batch_bad_requests_file_exits_4_naming_it(harness, text):
    requests = harness.out("bad_requests.json")
    with open(requests, "w", encoding="utf-8") as f:
        f.write(text)
    r = harness.cli("golden-batch", "--requests", requests)
    assert r.returncode == 4 and "--requests" in r.stderr


def test_golden_batch_streams_a_line_per_request_from_stdin(harness):
    """`golden-batch --requests -`: one request a line, answered as each is made; a line that is not an argument list
    fails alone; an empty line ends the stream (what kopt keeps open for a whole run)."""
    good = golden_args(harness, GOOD)[1:]
    other = golden_args(harness, GOOD, VECADD, '{"n": 24}')[1:]
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    p = subprocess.Popen([sys.executable, "-m", "kopt_harness", "golden-batch", "--requests", "-", "--preload"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=str(harness.root))
    try:
        p.stdin.write(json.dumps(good) + "\n")
        p.stdin.flush()
        first = json.loads(p.stdout.readline())  # answered before the next request is sent
        assert first["status"] == "ok"
        # where the request's seconds went (the stream's log line names those of 0.01 s and more)
        assert {"load", "setup", "plan", "draw", "store", "reference", "serialize", "write_wait"} <= set(
            first["phase_seconds"]), first
        assert abs(sum(first["phase_seconds"].values()) - first["elapsed_s"]) < 0.01, first
        p.stdin.write('{"not": "a list"}\n' + json.dumps(other) + "\n\n")
        p.stdin.flush()
        second, third = json.loads(p.stdout.readline()), json.loads(p.stdout.readline())
        _, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert second["status"] == "error" and second["exit_code"] == 4 and "argument list" in second["message"]
    assert third["status"] == "ok"
    with open(os.path.join(other[other.index("--out") + 1], "manifest.json"), encoding="utf-8") as f:
        assert json.load(f)["dims"]["n"] == 24
    # The run's log: when the preload ended and each request made was done, in seconds from the harness's import.
    stamps = re.findall(r"kopt_harness: golden-batch: (preloaded \(cuda\)|request done in [0-9.]+ s)(?: \([a-z_]+ [0-9.]+(?:, [a-z_]+ [0-9.]+)*\))? at ([0-9.]+) s", err)
    assert [w.split(" in ")[0] for w, _ in stamps] == ["preloaded (cuda)", "request done", "request done"], err
    assert [float(t) for _, t in stamps] == sorted(float(t) for _, t in stamps)


FAKE_TORCH = """
import os
def _note(what):
    with open(os.environ["FAKE_TORCH_LOG"], "a", encoding="utf-8") as f:
        f.write(what + "\\n")
_note("import")
class _Cuda:
    def __getattr__(self, name):
        _note("cuda." + name)
        return {"is_available": lambda: True, "init": lambda: None, "empty_cache": lambda: None}[name]
cuda = _Cuda()
"""


@pytest.mark.parametrize("preload, touched", [(["--preload", "imports"], []),
                                               (["--preload"], ["cuda.is_available", "cuda.init"])])
def test_golden_batch_preload_imports_makes_no_cuda_call_until_a_request(harness, preload, touched):
    """`--preload imports` (kopt's idle harness beside the gates and the search of a run whose golden data was
    cached, issue 36): torch is imported and nothing of torch.cuda is touched while it waits for its first request;
    bare `--preload` (a stream whose first request follows at once) starts CUDA too. A stand-in torch records each
    torch.cuda attribute the process reads."""
    fake = harness.root / "fake_torch"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(FAKE_TORCH)
    log = harness.root / "torch.log"
    env = dict(os.environ, PYTHONPATH=f"{PYTHON_DIR}:{fake}", FAKE_TORCH_LOG=str(log))
    p = subprocess.Popen([sys.executable, "-m", "kopt_harness", "golden-batch", "--requests", "-", *preload],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=str(harness.root))
    try:
        for _ in range(600):  # the preload done: its last note written (or the import's, with nothing after it)
            if log.exists() and len(log.read_text().split()) == 1 + len(touched):
                break
            time.sleep(0.05)
        time.sleep(0.3)
        assert p.poll() is None, "it waits for its first request"
        assert log.read_text().split() == ["import", *touched]
        _, err = p.communicate("\n", timeout=60)  # the end of the stream, no request
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert log.read_text().split() == ["import", *touched], "nothing more at its end"
