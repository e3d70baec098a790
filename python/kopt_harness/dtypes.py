"""Canonical dtype names (docs/CONTRACT.md), their numpy and torch counterparts, and default tolerances."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    name: str  # canonical: float32, bfloat16, int8, bool, ...
    kind: str  # "float", "signed", "unsigned" or "bool"
    itemsize: int  # bytes per element
    numpy_name: str  # numpy dtype name; "" where numpy has none (bfloat16)
    torch_name: str  # attribute of the torch module (torch.float32, ...)
    atol: float  # default reference tolerances (docs/CONTRACT.md)
    rtol: float


_TABLE = [
    DType("float32", "float", 4, "float32", "float32", 1e-4, 1e-4),
    DType("float64", "float", 8, "float64", "float64", 1e-8, 1e-7),
    DType("float16", "float", 2, "float16", "float16", 1e-2, 1e-2),
    DType("bfloat16", "float", 2, "", "bfloat16", 2e-2, 2e-2),
    DType("int8", "signed", 1, "int8", "int8", 0.0, 0.0),
    DType("int16", "signed", 2, "int16", "int16", 0.0, 0.0),
    DType("int32", "signed", 4, "int32", "int32", 0.0, 0.0),
    DType("int64", "signed", 8, "int64", "int64", 0.0, 0.0),
    DType("uint8", "unsigned", 1, "uint8", "uint8", 0.0, 0.0),
    DType("uint16", "unsigned", 2, "uint16", "uint16", 0.0, 0.0),
    DType("uint32", "unsigned", 4, "uint32", "uint32", 0.0, 0.0),
    DType("uint64", "unsigned", 8, "uint64", "uint64", 0.0, 0.0),
    DType("bool", "bool", 1, "bool", "bool", 0.0, 0.0),
]

BY_NAME = {d.name: d for d in _TABLE}
NAMES = [d.name for d in _TABLE]

# Approximate mode (--numerics-mode approximate) defaults to this multiple of the reference tolerances.
APPROX_FACTOR = 10.0


def lookup(name):
    """The DType for a canonical name, or None."""
    return BY_NAME.get(name)


def numpy_dtype(d):
    if not d.numpy_name:
        return None
    return np.dtype(d.numpy_name)


def from_numpy_dtype(npd):
    """Canonical name of a numpy dtype, or None when it has none."""
    npd = np.dtype(npd)
    for d in _TABLE:
        if d.numpy_name and np.dtype(d.numpy_name) == npd:
            return d.name
    return None


def from_torch_dtype(tdt):
    """Canonical name of a torch dtype (torch.float32 -> "float32"), or None."""
    text = str(tdt)  # "torch.float32"
    name = text.split(".", 1)[1] if text.startswith("torch.") else text
    return name if name in BY_NAME else None


def float_ceiling(d):
    """The largest value below 1.0 that `d` represents, so a uniform [-1, 1) draw cast to `d` stays below 1."""
    mantissa_bits = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}[d.name]
    return 1.0 - 2.0 ** -(mantissa_bits + 1)
