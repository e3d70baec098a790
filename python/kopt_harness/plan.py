"""Which buffers solve() gets, of what shape, and the values of its scalars. Pure logic: values in, values out.

Buffer shapes, in order of preference: what setup() returns (exact), ref.py's `shapes`, else guessed
(1-D, the product of the two largest dimensions, or --ptr-size elements)."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import arrays, dtypes
from .errors import DimsError, UsageError

INPUT, OUTPUT, INOUT = "input", "output", "inout"


@dataclass(frozen=True)
class Buffer:
    name: str
    role: str  # input | output | inout
    dtype: str
    shape: tuple
    source: str  # setup | shapes | guessed
    expr: tuple = None  # shapes: ref.py's entry (dimension names and integers), so kopt can size other dims

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def nbytes(self):
        return self.numel * dtypes.lookup(self.dtype).itemsize

    def manifest(self):
        m = {"name": self.name, "role": self.role, "dtype": self.dtype, "shape": list(self.shape),
             "nbytes": self.nbytes, "shape_source": self.source}
        if self.expr is not None:  # kopt's working-set estimate evaluates it at other dims (workload/working_set.h)
            m["shape_expr"] = [e if isinstance(e, str) else int(e) for e in self.expr]
        return m


def parse_dims(obj):
    """Dimensions from the --dims JSON object: identifier -> positive integer."""
    if not isinstance(obj, Mapping):
        raise UsageError('--dims must be a JSON object such as {"M": 64, "N": 32}')
    out = {}
    for k, v in obj.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise UsageError(f"--dims: {k!r} is not a valid dimension name")
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise UsageError(f"--dims: {k} = {v!r}; dimensions are positive integers")
        out[k] = v
    return out


def roles(params, inout):
    """Role of each pointer parameter; `inout` (ref.py) must name non-const pointers only."""
    if inout is None:
        inout = []
    if isinstance(inout, str) or not isinstance(inout, (list, tuple, set, frozenset)):
        raise UsageError(f"ref.py: inout must be a list of output names, got {inout!r}")
    by_name = {p.name: p for p in params}
    for n in inout:
        p = by_name.get(n)
        if p is None or not p.is_pointer:
            raise UsageError(f"ref.py: inout names {n!r}, which is not a pointer parameter of solve()")
        if p.const:
            raise UsageError(f"ref.py: inout names {n!r}, but solve() declares it const (an input)")
    out = {}
    for p in params:
        if p.is_pointer:
            out[p.name] = INPUT if p.const else (INOUT if p.name in inout else OUTPUT)
    return out


def split_setup(result, params):
    """setup()'s dict split into (arrays by pointer name, scalar values by scalar name)."""
    if not isinstance(result, Mapping):
        raise UsageError(f"ref.py: setup() must return a dict of parameter name -> tensor or scalar, "
                         f"got {type(result).__name__}")
    by_name = {p.name: p for p in params}
    unknown = [k for k in result if k not in by_name]
    if unknown:
        raise UsageError(f"ref.py: setup() returned {', '.join(map(repr, unknown))}, which solve() has no "
                         f"parameter for (parameters: {', '.join(by_name)})")
    bufs, scalars = {}, {}
    for k, v in result.items():
        p = by_name[k]
        if p.is_pointer:
            if not arrays.is_array(v):
                raise UsageError(f"ref.py: setup() returned {type(v).__name__} for pointer parameter {k!r}; "
                                 f"expected a torch tensor or numpy array")
            got = arrays.dtype_name(v)
            if got != p.dtype:
                raise UsageError(f"ref.py: setup() returned {k!r} as {got}, but solve() declares it {p.dtype}")
            if arrays.numel(v) == 0:
                raise UsageError(f"ref.py: setup() returned {k!r} with no elements")
            bufs[k] = v
        else:
            scalars[k] = v
    return bufs, scalars


def _shape_items(entry):
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _shape_entry(name, entry, dims):
    items = _shape_items(entry)
    shape = []
    for it in items:
        if isinstance(it, str):
            if it not in dims:
                raise UsageError(f"ref.py: shapes[{name!r}] uses dimension {it!r}, which was not given "
                                 f"(give --{it}=N; dims given: {', '.join(dims) or 'none'})")
            shape.append(dims[it])
        elif isinstance(it, (int, np.integer)) and not isinstance(it, bool) and it > 0:
            shape.append(int(it))
        else:
            raise UsageError(f"ref.py: shapes[{name!r}] has {it!r}; entries are dimension names or positive integers")
    if not shape:
        raise UsageError(f"ref.py: shapes[{name!r}] is empty")
    return tuple(shape)


def guessed_shape(dims, ptr_size):
    if ptr_size is not None:
        return (int(ptr_size),)
    if not dims:
        raise UsageError("no setup() or shapes in ref.py and no dimensions: give dims or --ptr-size N")
    largest = sorted(dims.values(), reverse=True)[:2]
    return (math.prod(largest),)


def plan_buffers(params, dims, role_of, shapes_attr, setup_bufs, ptr_size):
    """The buffers in solve()'s order, and whether any size was guessed."""
    if shapes_attr is not None and not isinstance(shapes_attr, Mapping):
        raise UsageError(f"ref.py: shapes must be a dict of name -> tuple of dims, got {type(shapes_attr).__name__}")
    shapes_attr = dict(shapes_attr or {})
    pointers = [p for p in params if p.is_pointer]
    names = {p.name for p in pointers}
    stray = [k for k in shapes_attr if k not in names]
    if stray:
        raise UsageError(f"ref.py: shapes names {', '.join(map(repr, stray))}, which solve() has no pointer "
                         f"parameter for (pointers: {', '.join(sorted(names))})")
    may_guess = not shapes_attr and not setup_bufs
    missing = [p.name for p in pointers if p.name not in setup_bufs and p.name not in shapes_attr]
    if missing and not may_guess:
        raise UsageError(f"pointer parameter(s) {', '.join(map(repr, missing))} have no buffer: add them to "
                         f"setup()'s dict or to ref.py's shapes")
    out, guessed = [], False
    for p in pointers:
        if p.name in setup_bufs:
            shape, source = arrays.shape_of(setup_bufs[p.name]), "setup"
        elif p.name in shapes_attr:
            shape, source = _shape_entry(p.name, shapes_attr[p.name], dims), "shapes"
        else:
            shape, source, guessed = guessed_shape(dims, ptr_size), "guessed", True
        expr = _shape_items(shapes_attr[p.name]) if source == "shapes" else None
        out.append(Buffer(p.name, role_of[p.name], p.dtype, shape, source, expr))
    return out, guessed


def _dim_value(p, v):
    """A dimension from kopt's command line as solve()'s scalar `p`; a DimsError when it does not fit."""
    d = dtypes.lookup(p.dtype)
    if d.kind not in ("bool", "float") and isinstance(v, int) and not isinstance(v, bool):
        info = np.iinfo(dtypes.numpy_dtype(d))
        if not info.min <= v <= info.max:
            raise DimsError(f"the dimension {p.name}={v} does not fit solve()'s {p.dtype} parameter {p.name!r} "
                            f"(at most {info.max}): give a smaller value, or declare the parameter 64-bit (int64_t)")
    try:
        return _scalar_value(p, v, f"the dimension {p.name}={v}")
    except UsageError as e:
        raise DimsError(str(e)) from None


def _scalar_value(p, v, where):
    d = dtypes.lookup(p.dtype)
    if arrays.is_array(v):
        if arrays.numel(v) != 1:
            raise UsageError(f"{where} gives scalar {p.name!r} an array of shape {list(arrays.shape_of(v))}")
        v = v.item()
    if isinstance(v, np.generic):
        v = v.item()
    if d.kind == "bool":
        if isinstance(v, bool) or v in (0, 1):
            return bool(v)
        raise UsageError(f"{where} gives bool scalar {p.name!r} the value {v!r}")
    if d.kind == "float":
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return float(v)
        raise UsageError(f"{where} gives {p.dtype} scalar {p.name!r} the value {v!r}")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise UsageError(f"{where} gives {p.dtype} scalar {p.name!r} the non-integer value {v!r}")
    info = np.iinfo(dtypes.numpy_dtype(d))
    if not info.min <= v <= info.max:
        raise UsageError(f"{where} gives {p.dtype} scalar {p.name!r} the value {v}, outside [{info.min}, {info.max}]")
    return v


def resolve_scalars(params, dims, setup_scalars):
    """Scalar values by name: from setup() when it returns them, else the dimension of the same name."""
    out = {}
    for p in params:
        if p.is_pointer:
            continue
        if p.name in setup_scalars:
            v = _scalar_value(p, setup_scalars[p.name], "setup()")
            if p.name in dims and _dim_value(p, dims[p.name]) != v:
                raise UsageError(f"scalar {p.name!r}: setup() returns {v} but the dimension {p.name} is {dims[p.name]}")
        elif p.name in dims:
            v = _dim_value(p, dims[p.name])
        else:
            raise UsageError(f"scalar parameter {p.name!r} has no value: give a dimension --{p.name}=N "
                             f"or return it from setup()")
        out[p.name] = v
    return out
