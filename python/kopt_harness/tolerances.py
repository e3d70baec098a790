"""Comparison tolerances for the expected outputs: ref.py's atol/rtol (and approx_atol/approx_rtol) where it
sets them, else defaults by the outputs' dtypes (docs/CONTRACT.md), the loosest where outputs differ."""

import math

from . import dtypes
from .errors import UsageError

FIELDS = ("atol", "rtol", "approx_atol", "approx_rtol")


def _value(module, field):
    v = getattr(module, field, None)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise UsageError(f"ref.py: {field} = {v!r}; tolerances are finite numbers >= 0")
    return float(v)


def defaults(output_dtypes):
    """(atol, rtol) for a set of output dtype names: the loosest of their defaults."""
    ds = [dtypes.lookup(n) for n in output_dtypes]
    return max((d.atol for d in ds), default=0.0), max((d.rtol for d in ds), default=0.0)


def resolve(module, output_dtypes):
    given = {f: _value(module, f) for f in FIELDS}
    atol, rtol = defaults(output_dtypes)
    atol = given["atol"] if given["atol"] is not None else atol
    rtol = given["rtol"] if given["rtol"] is not None else rtol
    approx_atol = given["approx_atol"] if given["approx_atol"] is not None else dtypes.APPROX_FACTOR * atol
    approx_rtol = given["approx_rtol"] if given["approx_rtol"] is not None else dtypes.APPROX_FACTOR * rtol
    source = "ref.py" if any(v is not None for v in given.values()) else "default"
    return {"atol": atol, "rtol": rtol, "approx_atol": approx_atol, "approx_rtol": approx_rtol,
            "source": source, "from_ref": sorted(f for f, v in given.items() if v is not None)}
