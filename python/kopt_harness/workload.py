"""Validating workload_model()'s output: {"flops": n or {dtype: n}, "bytes_min": n, "dtype": name (optional)},
where "bytes_min" may be given as its read and written parts, "bytes_read_min" and "bytes_written_min" (both;
bytes_min, when also given, must be their sum). kopt then judges the kernel against the DRAM rate of its
read/write mix (docs/ROOFLINE.md)."""

import math
from collections.abc import Mapping

import numpy as np

from . import dtypes
from .errors import UsageError

KEYS = ("flops", "bytes_min", "bytes_read_min", "bytes_written_min", "dtype")


def _positive(v, what, allow_zero=False):
    if isinstance(v, np.generic):
        v = v.item()
    if (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0
            or (v == 0 and not allow_zero)):
        raise UsageError(f"ref.py: workload_model() returned {what} = {v!r}; it must be a finite number "
                         f"{'>= 0' if allow_zero else '> 0'}")
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
    split = [k for k in ("bytes_read_min", "bytes_written_min") if k in result]
    if len(split) == 1:
        other = "bytes_written_min" if split[0] == "bytes_read_min" else "bytes_read_min"
        raise UsageError(f"ref.py: workload_model() returned {split[0]!r} without {other!r}: give both or neither")
    for k in ("flops",) + (() if split else ("bytes_min",)):
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
    if split:
        out["bytes_read_min"] = _positive(result["bytes_read_min"], "bytes_read_min", allow_zero=True)
        out["bytes_written_min"] = _positive(result["bytes_written_min"], "bytes_written_min", allow_zero=True)
        total = out["bytes_read_min"] + out["bytes_written_min"]
        if "bytes_min" in result:
            out["bytes_min"] = _positive(result["bytes_min"], "bytes_min")
            if abs(out["bytes_min"] - total) > 1e-6 * max(1, total):
                raise UsageError(f"ref.py: workload_model() returned bytes_min = {out['bytes_min']} but "
                                 f"bytes_read_min + bytes_written_min = {total}; they must agree")
        else:
            out["bytes_min"] = _positive(total, "bytes_read_min + bytes_written_min")
    else:
        out["bytes_min"] = _positive(result["bytes_min"], "bytes_min")
    if result.get("dtype") is not None:
        if dtypes.lookup(result["dtype"]) is None:
            raise UsageError(f"ref.py: workload_model() returned dtype {result['dtype']!r}; "
                             f"expected one of {', '.join(dtypes.NAMES)}")
        out["dtype"] = result["dtype"]
    return out
