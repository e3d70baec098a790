"""Comparing a kernel's output with the expected output, over raw bytes: the Python twin of the C++ runner's
src/runner/compare.cpp, with the same rule, the same fields and the same one-line summary, so kopt reads a
Triton result exactly as it reads a CUDA one.

Rule: |a - e| <= atol + rtol * |e| per element; NaN matches only NaN, an infinity only the same infinity.
Errors (max_abs_err, max_rel_err, rel_l2_err) are over finite pairs. An element whose bytes all equal the
poison byte (0xFF for floats: NaN in every float type; 0xA5 for integers and bool) counts as still poisoned,
unless the whole output is bitwise equal to the expected one. Large outputs are compared in chunks so memory
stays bounded.

The buffers are numpy uint8 arrays (on the host) or torch uint8 tensors (on the device that holds them: the
Triton runner compares on the GPU, where 32 M float32 elements take milliseconds instead of seconds); the same
code runs on both through a small backend (_NUMPY, _Torch), with float64 arithmetic either way.
"""

import math

import numpy as np

from . import dtypes

POISON_FLOAT, POISON_INT = 0xFF, 0xA5
CHUNK_ELEMENTS = 1 << 22


def poison_byte(dtype_name):
    return POISON_FLOAT if dtypes.lookup(dtype_name).kind == "float" else POISON_INT


def decode(raw, dtype_name):
    """Elements of a flat uint8 buffer as float64 (fp16/bf16 exact; int64 rounded as a C++ cast would)."""
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    if dtype_name == "bfloat16":
        return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype_name == "bool":
        return (raw != 0).astype(np.float64)
    d = dtypes.lookup(dtype_name)
    return raw.view(np.dtype(d.numpy_name).newbyteorder("<")).astype(np.float64)


class NumpyBackend:
    def flat_bytes(self, raw):
        return np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)

    decode = staticmethod(decode)
    isfinite, isnan, isinf = staticmethod(np.isfinite), staticmethod(np.isnan), staticmethod(np.isinf)

    @staticmethod
    def equal(a, b):
        return bool(np.array_equal(a, b))

    @staticmethod
    def first_true(mask):
        return int(np.argmax(mask))

    @staticmethod
    def poisoned(chunk, itemsize, byte):
        return int(np.all(chunk.reshape(-1, itemsize) == byte, axis=1).sum())


class TorchBackend:
    """The same operations on torch uint8 tensors (any device). Dtypes torch cannot widen to float64 on every
    device (uint16/32/64) are not offered: `supports` says which."""

    EXACT = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool")

    def __init__(self, torch):
        self.torch = torch
        self.isfinite, self.isnan, self.isinf = torch.isfinite, torch.isnan, torch.isinf

    @classmethod
    def supports(cls, dtype_name):
        return dtype_name in cls.EXACT

    def flat_bytes(self, raw):
        return raw.reshape(-1).contiguous()

    def decode(self, raw, dtype_name):
        t = self.torch
        if dtype_name == "bool":
            return (raw != 0).to(t.float64)
        return raw.view(getattr(t, dtypes.lookup(dtype_name).torch_name)).to(t.float64)

    def equal(self, a, b):
        return bool(self.torch.equal(a, b))

    @staticmethod
    def first_true(mask):
        return int(mask.nonzero()[0, 0])

    @staticmethod
    def poisoned(chunk, itemsize, byte):
        return int((chunk.view(-1, itemsize) == byte).all(dim=1).sum())


_NUMPY = NumpyBackend()


def backend_for(raw):
    """The backend for a buffer: torch for a torch tensor, numpy otherwise."""
    if isinstance(raw, np.ndarray) or not hasattr(raw, "view") or not hasattr(raw, "device"):
        return _NUMPY
    import torch  # noqa: PLC0415 (only reached with a torch tensor in hand)
    return TorchBackend(torch)


def _num(v):
    if math.isfinite(v):
        return float(v)
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _g(v, digits):
    """printf's %g as fmt writes it in runner/compare.cpp: a NaN with its sign bit set (the float poison's) is -nan."""
    if math.isnan(v) and math.copysign(1.0, v) < 0:
        return "-nan"
    return format(v, f".{digits}g")


class Comparison:
    """One output's comparison; `to_json()` has the fields of runner/compare.cpp's to_json."""

    def __init__(self, numel):
        self.ok = False
        self.numel = numel
        self.mismatches = 0
        self.nan_or_inf_mismatches = 0
        self.still_poisoned = 0
        self.bitwise_equal = False
        self.max_abs_err = 0.0
        self.max_rel_err = 0.0
        self.rel_l2_err = 0.0
        self.first_bad_index = -1
        self.first_bad_coords = []
        self.expected_at_first_bad = 0.0
        self.actual_at_first_bad = 0.0

    def summary(self):
        if self.ok:
            return (f"ok{' (bitwise)' if self.bitwise_equal else ''} max_abs={_g(self.max_abs_err, 3)} "
                    f"max_rel={_g(self.max_rel_err, 3)} rel_l2={_g(self.rel_l2_err, 3)}")
        coords = ",".join(str(c) for c in self.first_bad_coords)
        s = (f"MISMATCH {self.mismatches}/{self.numel} elements; first bad index {self.first_bad_index} [{coords}]: "
             f"expected {_g(self.expected_at_first_bad, 6)}, got {_g(self.actual_at_first_bad, 6)}; "
             f"max_abs={_g(self.max_abs_err, 3)} rel_l2={_g(self.rel_l2_err, 3)}")
        if self.still_poisoned > 0:
            s += f"; {self.still_poisoned} elements never written (still poisoned)"
        return s

    def to_json(self):
        return {"ok": self.ok, "numel": self.numel, "mismatches": self.mismatches,
                "nan_or_inf_mismatches": self.nan_or_inf_mismatches, "still_poisoned": self.still_poisoned,
                "bitwise_equal": self.bitwise_equal, "max_abs_err": _num(self.max_abs_err),
                "max_rel_err": _num(self.max_rel_err), "rel_l2_err": _num(self.rel_l2_err),
                "first_bad_index": self.first_bad_index, "first_bad_coords": list(self.first_bad_coords),
                "expected_at_first_bad": _num(self.expected_at_first_bad),
                "actual_at_first_bad": _num(self.actual_at_first_bad), "summary": self.summary()}


def coords_of(index, shape):
    """Row-major coordinates of a flat index (as runner/compare.cpp computes them)."""
    out = [0] * len(shape)
    rem = index
    for d in range(len(shape) - 1, -1, -1):
        out[d] = rem % shape[d] if shape[d] > 0 else 0
        rem = rem // shape[d] if shape[d] > 0 else 0
    return out


def compare(dtype_name, shape, expected_raw, actual_raw, atol, rtol):
    """Compares two flat uint8 buffers of one dtype and shape: both numpy arrays, or both torch tensors on one
    device."""
    itemsize = dtypes.lookup(dtype_name).itemsize
    be = backend_for(actual_raw)
    expected_raw, actual_raw = be.flat_bytes(expected_raw), be.flat_bytes(actual_raw)
    if expected_raw.shape[0] != actual_raw.shape[0] or expected_raw.shape[0] % itemsize:
        raise ValueError(f"compare: {expected_raw.shape[0]} expected bytes vs {actual_raw.shape[0]} actual bytes "
                         f"for {dtype_name}")
    numel = expected_raw.shape[0] // itemsize
    r = Comparison(numel)
    r.bitwise_equal = be.equal(expected_raw, actual_raw)
    pb = poison_byte(dtype_name)
    err2 = ref2 = 0.0
    step = CHUNK_ELEMENTS
    for begin in range(0, numel, step):
        end = min(numel, begin + step)
        eb = expected_raw[begin * itemsize:end * itemsize]
        ab = actual_raw[begin * itemsize:end * itemsize]
        e, a = be.decode(eb, dtype_name), be.decode(ab, dtype_name)
        special = ~be.isfinite(e) | ~be.isfinite(a)
        both_nan = be.isnan(e) & be.isnan(a)
        same_inf = be.isinf(e) & be.isinf(a) & ((e > 0) == (a > 0))
        special_bad = special & ~(both_nan | same_inf)
        finite = ~special
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            d = abs(a - e)
            d[special] = 0.0
            ae = abs(e)
            bad = special_bad | (finite & (d > atol + rtol * ae))
            if bool(finite.any()):
                r.max_abs_err = max(r.max_abs_err, float(d[finite].max()))
                nz = finite & (e != 0)
                if bool(nz.any()):
                    r.max_rel_err = max(r.max_rel_err, float((d[nz] / ae[nz]).max()))
                df, ef = d[finite], e[finite]
                err2 += float((df * df).sum())
                ref2 += float((ef * ef).sum())
        r.nan_or_inf_mismatches += int(special_bad.sum())
        nbad = int(bad.sum())
        if nbad and r.mismatches == 0:
            i = be.first_true(bad)
            r.first_bad_index = begin + i
            r.expected_at_first_bad = float(e[i])
            r.actual_at_first_bad = float(a[i])
        r.mismatches += nbad
        if not r.bitwise_equal:
            r.still_poisoned += be.poisoned(ab, itemsize, pb)
    r.rel_l2_err = math.sqrt(err2 / ref2) if ref2 > 0 else math.sqrt(err2)
    if r.first_bad_index >= 0 and len(shape) > 0:
        r.first_bad_coords = coords_of(r.first_bad_index, list(shape))
    r.ok = r.mismatches == 0
    return r


def first_changed_element(before_raw, after_raw, itemsize):
    """-1 when the two byte buffers are equal, else the index of the first element whose bytes differ. Both
    numpy arrays, or both torch tensors on one device."""
    be = backend_for(after_raw)
    before_raw, after_raw = be.flat_bytes(before_raw), be.flat_bytes(after_raw)
    if be.equal(before_raw, after_raw):
        return -1
    return be.first_true(before_raw != after_raw) // itemsize
