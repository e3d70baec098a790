"""The helper kopt appends to a Triton copy whose launch of an imported kernel gives no num_warps
(src/search/derive_triton.cpp, own_num_warps): `_kopt_launch_options(kernel, num_warps=W)[grid](...)`. 0 is the launch
as written (the project's own choice); another value pins it, and an @triton.autotune kernel (triton.runtime.Autotuner:
`configs`, `fn`) runs its first config with that num_warps (else its first config), without the autotuner. Tested on
stand-ins for Triton's objects (no GPU, no Triton): the helper is read from `kopt annotate --write`'s copy."""

import re
import subprocess

import pytest
from conftest import built_kopt

WRAPPER = """import torch
from pkg.ops import kern


def run_kernel(*, x, y, n):
    kern[(n,)](x, y, n, BLOCK=1024)
"""


@pytest.fixture(scope="module")
def derived(tmp_path_factory):
    k = built_kopt()
    if not k:
        pytest.skip("no kopt binary (build/kopt)")
    d = tmp_path_factory.mktemp("launch_options")
    (d / "kernel.py").write_text(WRAPPER)
    r = subprocess.run([k, "annotate", str(d / "kernel.py"), "--write", str(d / "derived.py")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    text = (d / "derived.py").read_text()
    helper = text[text.index("def _kopt_launch_options("):]
    ns = {}
    exec(helper, ns)  # the helper alone: the copy's imports (torch, the package) are not needed by it
    return text, ns["_kopt_launch_options"]


class Launcher:
    """A kernel[grid] stand-in: records each launch's grid, arguments and keywords."""

    def __init__(self, calls):
        self.calls = calls

    def __getitem__(self, grid):
        return lambda *a, **kw: self.calls.append((grid, a, kw))


class Config:
    def __init__(self, kwargs, num_warps, num_stages=2, maxnreg=None):
        self.kwargs, self.num_warps, self.num_stages, self.maxnreg = kwargs, num_warps, num_stages, maxnreg

    def all_kwargs(self):
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages, "maxnreg": self.maxnreg}


class Autotuned(Launcher):
    def __init__(self, calls, configs):
        super().__init__(calls)
        self.configs = configs
        self.fn = Launcher(calls)


def test_the_copy_launches_through_the_helper(derived):
    text, _ = derived
    assert re.search(r"def run_kernel\(\*, x, y, n, (BLOCK=1024, )?num_warps=0\):", text), text
    assert "_kopt_launch_options(kern, num_warps=num_warps)[(n,)](x, y, n, BLOCK=" in text
    assert "# @kopt param num_warps values=0,1,2,4,8,16,32 default=0" in text


def test_zero_is_the_launch_as_written(derived):
    _, pin = derived
    k = Launcher([])
    assert pin(k, num_warps=0) is k


def test_a_plain_kernel_gets_the_option_as_a_launch_keyword(derived):
    _, pin = derived
    calls = []
    pin(Launcher(calls), num_warps=8)[(4,)](1, 2, BLOCK=64)
    assert calls == [((4,), (1, 2), {"BLOCK": 64, "num_warps": 8})]


def test_an_autotuned_kernel_runs_its_first_config_with_those_warps_without_the_autotuner(derived):
    _, pin = derived
    calls = []
    k = Autotuned(calls, [Config({"BT": 16}, 2), Config({"BT": 32}, 4), Config({"BT": 64}, 4, num_stages=3)])
    pin(k, num_warps=4)[(8,)]("x")
    assert calls == [((8,), ("x",), {"BT": 32, "num_warps": 4, "num_stages": 2})]  # maxnreg None is not passed
    calls.clear()
    pin(k, num_warps=16)[(8,)]("x")  # no config has 16 warps: the first config's meta-parameters, 16 warps
    assert calls == [((8,), ("x",), {"BT": 16, "num_warps": 16, "num_stages": 2})]


class Heuristics(Launcher):
    """triton.runtime.Heuristics: `values` computed from the launch's arguments by name, then `fn` run."""

    def __init__(self, calls, fn, arg_names, values):
        super().__init__(calls)
        self.fn, self.arg_names, self.values = fn, arg_names, values


def test_heuristics_above_an_autotuned_kernel_still_set_their_values(derived):
    """flash-linear-attention's logsumexp_fwd_kernel: @triton.heuristics over @triton.autotune over num_warps (H200,
    s31: the helper passed num_warps through the heuristics to the autotuner, which passed its config's too:
    "JITFunction.run() got multiple values for keyword argument 'num_warps'")."""
    _, pin = derived
    calls = []
    tuned = Autotuned(calls, [Config({}, 1), Config({}, 8)])
    k = Heuristics(calls, tuned, ["x", "scale", "D"], {"HAS_SCALE": lambda a: a["scale"] is not None,
                                                       "TWICE": lambda a: 2 * a["D"]})
    pin(k, num_warps=8)[(4, 1)]("x", None, D=64)
    assert calls == [((4, 1), ("x", None), {"D": 64, "HAS_SCALE": False, "TWICE": 128, "num_warps": 8, "num_stages": 2})]
    assert pin(k, num_warps=0) is k  # the launch as written: the heuristics and the autotuner, Triton's
    calls.clear()
    plain = Heuristics(calls, Launcher(calls), ["x"], {"B": lambda a: 1})  # no autotuner: the options as keywords
    pin(plain, num_warps=4)[(2,)]("x")
    assert calls == [((2,), ("x",), {"num_warps": 4})]
