"""The Triton kernel contract (docs/TRITON.md): kernel.py exposes

    def setup(*, seed, **dims) -> {"inputs": {name: tensor | scalar, ...}, "outputs": [name, ...]}
    def run_kernel(**inputs, **config)    # writes the outputs in place

`inputs` holds every argument of run_kernel, outputs included (an output is a tensor listed in `outputs`);
`config` holds the tuning values kopt chooses: every `# @kopt param` by name (constexpr params, `num_warps`,
`num_stages`) and every `# @kopt method` guard `KOPT_<ID>` as 0/1. Loading and checking are separate: the
checks are pure, so they are tested with numpy arrays and no triton.
"""

import keyword
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import arrays, dtypes, refmod, signature
from .errors import RefError, UsageError

MODULE_NAME = "kopt_kernel"
RESERVED = ("num_warps", "num_stages")  # launch options: config names, never input names


@dataclass
class KernelSetup:
    inputs: dict  # name -> array or scalar, in setup()'s order
    outputs: list  # names of the output tensors (a subset of inputs)

    def arrays(self):
        return {k: v for k, v in self.inputs.items() if arrays.is_array(v)}

    def scalars(self):
        return {k: v for k, v in self.inputs.items() if not arrays.is_array(v)}


# The user's kernel file when `path` is a copy of it (set by kopt optimize: src/toolchain/tools.h run_kernel_copies_as).
ORIGIN_ENV = "KOPT_KERNEL_ORIGIN"


def load(path):
    """Imports kernel.py as module `kopt_kernel` (its folder first on sys.path); it must define setup and
    run_kernel. An exception while importing is a RefError (its traceback is shown). A copy of the user's kernel
    (KOPT_KERNEL_ORIGIN names the original) runs with the original's __file__ and folder (refmod.import_user_module)."""
    module = refmod.import_user_module(path, MODULE_NAME, "--triton-kernel", "importing kernel.py", error_file="kernel.py",
                                       origin=os.environ.get(ORIGIN_ENV))
    check_module(module, os.path.abspath(path))
    return module


def check_module(module, path="kernel.py"):
    missing = [n for n in ("setup", "run_kernel") if not callable(getattr(module, n, None))]
    if missing:
        raise UsageError(f"{path}: defines no function {' and no function '.join(missing)}; a Triton kernel "
                         f"file exposes setup(*, seed, **dims) -> {{'inputs': {{...}}, 'outputs': [...]}} and "
                         f"run_kernel(**inputs, **config) (docs/TRITON.md)")


def _is_scalar(v):
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def check_setup_result(res, where="kernel.py: setup()"):
    """The KernelSetup of what setup() returned; every contract violation is a UsageError naming it."""
    if not isinstance(res, Mapping):
        raise UsageError(f"{where} must return a dict {{'inputs': {{name: tensor or scalar}}, 'outputs': [names]}}, "
                         f"got {type(res).__name__}")
    keys = set(res)
    if keys != {"inputs", "outputs"}:
        extra, missing = sorted(map(str, keys - {"inputs", "outputs"})), sorted({"inputs", "outputs"} - keys)
        parts = ([f"lacks {', '.join(map(repr, missing))}"] if missing else []) + \
                ([f"has unknown key(s) {', '.join(map(repr, extra))}"] if extra else [])
        raise UsageError(f"{where} returned a dict that {' and '.join(parts)}; it must have exactly "
                         f"'inputs' (a dict name -> tensor or scalar) and 'outputs' (a list of names)")
    inputs, outputs = res["inputs"], res["outputs"]
    if not isinstance(inputs, Mapping) or not inputs:
        raise UsageError(f"{where}: 'inputs' must be a non-empty dict name -> tensor or scalar, "
                         f"got {type(inputs).__name__ if not isinstance(inputs, Mapping) else 'an empty dict'}")
    if isinstance(outputs, str) or not isinstance(outputs, (list, tuple)) or not outputs:
        raise UsageError(f"{where}: 'outputs' must be a non-empty list of input names, got {outputs!r}")
    for name in inputs:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(f"{where}: input name {name!r} is not a Python identifier (run_kernel takes it by keyword)")
        if name.startswith("KOPT_") or name in RESERVED:
            raise UsageError(f"{where}: input name {name!r} is reserved for kopt's configuration "
                             f"(KOPT_<ID> guards, num_warps, num_stages); rename it")
    seen = set()
    for name in outputs:
        if not isinstance(name, str):
            raise UsageError(f"{where}: 'outputs' holds {name!r}; it must list input names (strings)")
        if name in seen:
            raise UsageError(f"{where}: 'outputs' lists {name!r} twice")
        seen.add(name)
        if name not in inputs:
            raise UsageError(f"{where}: output {name!r} is not in 'inputs' (inputs: {', '.join(inputs)}); every "
                             f"output is also an argument of run_kernel, so it must be in 'inputs' too")
        if not arrays.is_array(inputs[name]):
            raise UsageError(f"{where}: output {name!r} is {type(inputs[name]).__name__}, not a tensor; outputs "
                             f"are tensors the kernel writes in place")
    for name, v in inputs.items():
        if arrays.is_array(v):
            dt = arrays.dtype_name(v)
            if dtypes.lookup(dt) is None:
                raise UsageError(f"{where}: input {name!r} has dtype {dt}, which kopt does not handle "
                                 f"(supported: {', '.join(dtypes.NAMES)})")
            if arrays.numel(v) == 0:
                raise UsageError(f"{where}: input {name!r} has no elements")
        elif not _is_scalar(v):
            raise UsageError(f"{where}: input {name!r} is {type(v).__name__}; inputs are tensors or scalars "
                             f"(int, float, bool)")
        elif isinstance(v, (float, np.floating)) and not np.isfinite(v):
            raise UsageError(f"{where}: scalar {name!r} is {v}; scalars must be finite")
    return KernelSetup(dict(inputs), list(outputs))


def scalar_dtype(v):
    """The canonical dtype a scalar input is recorded with: bool, int64 (Python int), float64 (Python float),
    or the numpy scalar's own."""
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, np.generic):
        return dtypes.from_numpy_dtype(v.dtype) or "float64"
    return "int64" if isinstance(v, int) else "float64"


def params_of(ks):
    """solve()-style params for the golden machinery: each tensor a pointer (an output when listed in
    `outputs`, else a const input), each scalar a scalar, in setup()'s order."""
    out = []
    for name, v in ks.inputs.items():
        if arrays.is_array(v):
            out.append(signature.Param(name, "pointer", arrays.dtype_name(v), const=name not in ks.outputs))
        else:
            out.append(signature.Param(name, "scalar", scalar_dtype(v)))
    return out


def call_setup(module, seed, dims, where="kernel.py: setup()"):
    """Calls setup(seed=..., **dims) by keyword (only the names it declares, unless it takes **kwargs)."""
    from . import refmod  # noqa: PLC0415

    fn = module.setup
    res = refmod.call(fn, "setup()", {**dims, "seed": seed}, file="kernel.py")
    return check_setup_result(res, where)


def check_config(config, input_names, where="--config"):
    """A configuration is a dict name -> int (or bool/float) that shares no name with the inputs."""
    if not isinstance(config, Mapping):
        raise UsageError(f"{where}: a configuration is a JSON object name -> value, got {config!r}")
    for k, v in config.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise UsageError(f"{where}: {k!r} is not a valid argument name")
        if isinstance(v, (dict, list)) or v is None:
            raise UsageError(f"{where}: {k} = {v!r}; configuration values are numbers")
        if k in input_names:
            raise UsageError(f"{where}: {k!r} is both a configuration value and an input of setup(); rename one")
    return dict(config)
