"""Validating workload_model()'s output: {"flops": n or {dtype: n}, "bytes_min": n, "dtype": name (optional)}."""

import math
from collections.abc import Mapping

import numpy as np

from . import dtypes
from .errors import UsageError

KEYS = ("flops", "bytes_min", "dtype")


def _positive(v, what):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise UsageError(f"ref.py: workload_model() returned {what} = {v!r}; it must be a finite number > 0")
    return int(v) if float(v).is_integer() else float(v)


def validate(result):
    """The normalised model (numbers as int where integral), or UsageError naming what is wrong."""
    if not isinstance(result, Mapping):
        raise UsageError(f"ref.py: workload_model() must return a dict with flops and bytes_min, "
                         f"got {type(result).__name__}")
    unknown = [k for k in result if k not in KEYS]
    if unknown:
        raise UsageError(f"ref.py: workload_model() returned unknown key(s) {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(KEYS)})")
    for k in ("flops", "bytes_min"):
        if k not in result:
            raise UsageError(f"ref.py: workload_model() returned no {k!r}")
    out = {}
    flops = result["flops"]
    if isinstance(flops, Mapping):
        if not flops:
            raise UsageError("ref.py: workload_model() returned an empty flops dict")
        out["flops"] = {}
        for dt, n in flops.items():
            if dtypes.lookup(dt) is None:
                raise UsageError(f"ref.py: workload_model() flops names dtype {dt!r}; "
                                 f"expected one of {', '.join(dtypes.NAMES)}")
            out["flops"][dt] = _positive(n, f"flops[{dt!r}]")
    else:
        out["flops"] = _positive(flops, "flops")
    out["bytes_min"] = _positive(result["bytes_min"], "bytes_min")
    if result.get("dtype") is not None:
        if dtypes.lookup(result["dtype"]) is None:
            raise UsageError(f"ref.py: workload_model() returned dtype {result['dtype']!r}; "
                             f"expected one of {', '.join(dtypes.NAMES)}")
        out["dtype"] = result["dtype"]
    return out
