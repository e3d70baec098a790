"""Shared helpers: write a ref.py and a signature, run the harness in-process or as `python3 -m kopt_harness`."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

from kopt_harness import golden, signature, store  # noqa: E402


def built_kopt():
    """The kopt binary the tests may run: $KOPT_BIN, else build/kopt, else .carry/build/kopt; None without one."""
    root = os.path.dirname(PYTHON_DIR)
    for c in (os.environ.get("KOPT_BIN"), os.path.join(root, "build", "kopt"), os.path.join(root, ".carry", "build", "kopt")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def P(name, dtype="float32", const=None, kind=None):
    """One signature param: pointer unless dtype is given with kind='scalar'; const defaults to True."""
    kind = kind or "pointer"
    p = {"name": name, "kind": kind, "dtype": dtype}
    if kind == "pointer":
        p["const"] = True if const is None else const
    return p


def S(name, dtype="int32"):
    return P(name, dtype, kind="scalar")


VECADD = [P("a"), P("b"), P("c", const=False), S("n")]
MATMUL = [P("A"), P("B"), P("C", const=False), S("M"), S("N"), S("K")]


@pytest.fixture
def harness(tmp_path):
    return Harness(tmp_path)


class Harness:
    def __init__(self, root):
        self.root = root
        self.count = 0

    def ref(self, text):
        self.count += 1
        folder = self.root / f"ref{self.count}"
        folder.mkdir()
        path = folder / "ref.py"
        path.write_text(textwrap.dedent(text))
        return str(path)

    def sig_file(self, params):
        path = self.root / f"sig{self.count}.json"
        path.write_text(json.dumps({"params": params}))
        return str(path)

    def out(self, name="golden"):
        return str(self.root / name)

    def generate(self, ref_text, params, dims, **kw):
        """Runs golden.generate in-process; returns (summary, manifest, [tensors per seed])."""
        ref = self.ref(ref_text)
        out = kw.pop("out", None) or self.out(f"golden{self.count}")
        opts = golden.Options(ref=ref, params=signature.parse({"params": params}), dims=dims, out=out, **kw)
        summary = golden.generate(opts)
        return summary, self.manifest(out), self.tensors(out)

    @staticmethod
    def manifest(out):
        with open(os.path.join(out, "manifest.json")) as f:
            return json.load(f)

    def tensors(self, out):
        m = self.manifest(out)
        return [store.read_tensors(os.path.join(out, f["file"])) for f in m["files"]]

    def cli(self, *args, timeout=300):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        return subprocess.run([sys.executable, "-m", "kopt_harness", *args], capture_output=True, text=True,
                              env=env, cwd=str(self.root), timeout=timeout)


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: needs Ray (a one-node cluster on loopback is started; skipped without "
                                       "`import ray`): test_ray_cluster.py")
