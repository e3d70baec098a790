"""Helpers for the Triton tests: kernel.py files written with numpy (the contract needs no triton), golden
data made in-process, the runner run in-process or as `python3 -m kopt_harness triton-run`."""

import json
import os
import subprocess
import sys
import textwrap

from kopt_harness import triton_golden, triton_run

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A vector add written against the contract, in numpy. `BEHAVIOUR` is replaced per test.
# The vector add's setup(), shared by the test kernels that differ only in run_kernel().
VECADD_SETUP = """
def setup(*, seed, n):
    rng = np.random.default_rng(seed)
    return {"inputs": {"x": rng.standard_normal(n).astype(np.float32),
                       "y": rng.standard_normal(n).astype(np.float32),
                       "out": np.empty(n, dtype=np.float32), "n": n, "alpha": 2.0},
            "outputs": ["out"]}
"""

VECADD_KERNEL = """
import numpy as np

# @kopt param BLOCK values=64,128 default=128
CALLS = []
""" + VECADD_SETUP + """
def run_kernel(*, x, y, out, n, alpha, BLOCK=128, **config):
    CALLS.append(dict(config, BLOCK=BLOCK))
    BEHAVIOUR
"""

CORRECT = "out[:] = alpha * x + y"

VECADD_REF = """
def reference(*, x, y, out, alpha, **_):
    out[:] = alpha * x + y

def workload_model(*, n, **_):
    return {"flops": 2 * n, "bytes_min": 12 * n}
"""


class TritonHarness:
    def __init__(self, root, device="numpy"):
        self.root = root
        self.count = 0
        self.device = device  # the runner's buffers: numpy, or torch on the CPU ("cpu")

    def write(self, name, text):
        self.count += 1
        folder = self.root / f"k{self.count}"
        folder.mkdir(exist_ok=True)
        path = folder / name
        path.write_text(textwrap.dedent(text))
        return str(path)

    def kernel(self, behaviour=CORRECT, text=None):
        text = text if text is not None else VECADD_KERNEL.replace("BEHAVIOUR", behaviour)
        return self.write("kernel.py", text)

    def golden(self, kernel, ref_text=VECADD_REF, dims=None, seeds=2, **kw):
        ref = self.write("ref.py", ref_text)
        out = str(self.root / f"golden{self.count}")
        opts = triton_golden.TritonOptions(kernel=kernel, ref=ref, dims=dims or {"n": 1000}, seeds=seeds, out=out, **kw)
        summary = triton_golden.generate(opts)
        return summary, out

    def run(self, kernel, golden, mode="check", sealing=None, **kw):
        """`sealing`: the judge and seal to run with (sealed.Sealing); default this process's (none: no judge)."""
        kw.setdefault("device", self.device)
        kw.setdefault("max_time_s", 0.3)
        out = str(self.root / f"result{self.count}.json")
        opts = triton_run.RunOptions(kernel=kernel, out=out, golden=golden, mode=mode, **kw)
        triton_run.check_options(opts)
        result, rc = triton_run.run(opts, sealing)
        return result, rc

    def cli(self, *args, env=None, timeout=300, module="kopt_harness"):
        """`python3 -m kopt_harness ARGS`; module="kopt_harness.fork_client" goes through the fork server."""
        e = dict(os.environ, PYTHONPATH=PYTHON_DIR, **(env or {}))
        return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                              env=e, cwd=str(self.root), timeout=timeout)

    @staticmethod
    def read(path):
        with open(path) as f:
            return json.load(f)
