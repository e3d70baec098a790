"""Drawing input values: floats uniform in [-1, 1), signed integers in [-64, 64), unsigned in [0, 64),
bools at random; never all zeros. Each (seed, buffer name) has its own numpy generator, so a buffer's
values depend on nothing but the seed and its name."""

import zlib

import numpy as np

from . import dtypes
from .errors import UsageError

MAX_ATTEMPTS = 64


def generator(seed, name):
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def _draw_once(rng, d, shape):
    if d.kind == "float":
        work = np.float64 if d.name == "float64" else np.float32
        x = rng.random(shape, dtype=work)
        x *= work(2)  # in place: the same values as `* 2 - 1`, without two temporaries of the buffer's size
        x -= work(1)
        if d.name in ("float16", "bfloat16"):
            # Rounding to fewer mantissa bits could turn values just below 1 into 1.0; keep [-1, 1).
            np.minimum(x, work(dtypes.float_ceiling(d)), out=x)
        if d.name == "float16":
            x = x.astype(np.float16)
        return x  # bfloat16 stays float32 here; the torch backend rounds it (the ceiling keeps it below 1)
    if d.kind == "signed":
        return rng.integers(-64, 64, size=shape, dtype=dtypes.numpy_dtype(d))
    if d.kind == "unsigned":
        return rng.integers(0, 64, size=shape, dtype=dtypes.numpy_dtype(d))
    return rng.random(shape) < 0.5


def draw(d, shape, seed, name):
    """A numpy array of `shape` for dtype `d` (float32 values for bfloat16), never all zeros."""
    rng = generator(seed, name)
    for _ in range(MAX_ATTEMPTS):
        x = _draw_once(rng, d, shape)
        if np.any(x):
            return x
    raise UsageError(f"buffer {name!r} ({d.name}, shape {list(shape)}): {MAX_ATTEMPTS} draws were all zeros; "
                     f"give it more elements or fill it in setup()")
