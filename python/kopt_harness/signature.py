"""The solve() signature kopt parsed from the kernel, as the JSON it hands the harness."""

import json
import keyword
from dataclasses import dataclass

from . import dtypes
from .errors import UsageError


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "pointer" or "scalar"
    dtype: str  # canonical dtype name
    const: bool = False  # pointers only: const T* is an input, T* an output

    @property
    def is_pointer(self):
        return self.kind == "pointer"


def parse(obj, where="signature"):
    """Params from {"params": [{"name", "kind", "dtype", "const"}, ...]}, in solve()'s order.

    kopt writes the signature wrapped as {"meta": ..., "signature": {"params": [...]}}; both forms are accepted.
    """
    if isinstance(obj, dict) and isinstance(obj.get("signature"), dict):
        obj = obj["signature"]
    if not isinstance(obj, dict) or not isinstance(obj.get("params"), list):
        raise UsageError(f'{where}: expected an object {{"params": [...]}}')
    params, seen = [], set()
    for i, p in enumerate(obj["params"]):
        if not isinstance(p, dict):
            raise UsageError(f"{where}: params[{i}] is not an object")
        name = p.get("name")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(f"{where}: params[{i}] has no valid name ({name!r})")
        if name in seen:
            raise UsageError(f"{where}: parameter {name!r} appears twice")
        seen.add(name)
        kind = p.get("kind")
        if kind not in ("pointer", "scalar"):
            raise UsageError(f"{where}: parameter {name!r} has kind {kind!r}; expected 'pointer' or 'scalar'")
        dt = p.get("dtype")
        if dtypes.lookup(dt) is None:
            raise UsageError(f"{where}: parameter {name!r} has dtype {dt!r}; expected one of {', '.join(dtypes.NAMES)}")
        const = p.get("const", False)
        if not isinstance(const, bool):
            raise UsageError(f"{where}: parameter {name!r} has a non-boolean 'const'")
        params.append(Param(name, kind, dt, const if kind == "pointer" else False))
    if not any(p.is_pointer for p in params):
        raise UsageError(f"{where}: solve() has no pointer parameter, so there is nothing to check")
    return params


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except OSError as e:
        raise UsageError(f"--signature {path}: cannot read it ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"--signature {path}: not valid JSON ({e})") from None
    return parse(obj, where=f"--signature {path}")
