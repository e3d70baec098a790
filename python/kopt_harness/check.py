"""`check`: the contract without a GPU (kopt check, and every kernel command before it looks for a GPU).

Static part (always, allocates nothing, so it is cheap at any dimensions): ref.py imports and defines
reference(); the dimensions satisfy what solve()'s scalars, ref.py's `shapes`, setup(), reference() and
workload_model() need; kernel.py (Triton) parses and its setup() gets every argument it requires.
With --run: the reference also runs once on the CPU (one seed, numpy or torch CPU) into a scratch folder,
which catches shape and dtype errors; a reference that cannot run on the CPU (it needs CUDA, or torch is not
installed) is reported as skipped, not as an error."""

import ast
import inspect
import os
import tempfile

from . import golden, plan, refmod, triton_golden
from .errors import DimsError, RefError, UsageError


def _required_and_named(fn):
    """(required keyword names, every named parameter, takes **kwargs) of a function; None when unknown."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    required, named, var_kw = set(), set(), False
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            var_kw = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            named.add(p.name)
            if p.default is p.empty:
                required.add(p.name)
    return required, named, var_kw


def _need(fn, where, available, hint):
    info = _required_and_named(fn)
    if info is None:
        return set(), False
    required, named, var_kw = info
    missing = sorted(required - set(available))
    if missing:
        raise UsageError(f"{where} requires {', '.join(map(repr, missing))}, which kopt cannot supply "
                         f"(available: {', '.join(sorted(available)) or 'none'}); {hint.format(name=missing[0])}")
    return named, var_kw


def _triton_setup_args(kernel_path):
    """kernel.py's setup() parameters, read with ast (no import: triton may not be installed here)."""
    try:
        with open(kernel_path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=kernel_path)
    except OSError as e:
        raise UsageError(f"{kernel_path}: cannot read it ({e.strerror})") from None
    except SyntaxError as e:
        raise UsageError(f"{kernel_path}:{e.lineno}: syntax error: {e.msg}") from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "setup":
            a = node.args
            pos = a.posonlyargs + a.args
            n_req = len(pos) - len(a.defaults)
            required = {x.arg for x in pos[:n_req]}
            required |= {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None}
            named = {x.arg for x in pos + a.kwonlyargs}
            return required, named, a.kwarg is not None
    raise UsageError(f"{kernel_path}: defines no setup(seed, **dims); a Triton kernel needs one (docs/TRITON.md)")


def static_check(ref, params, dims, triton_kernel=None):
    """Returns {"unused_dims": [...], "warnings": [...]}; raises UsageError / RefError naming what to fix."""
    module = refmod.load(ref)
    dim_hint = "give a dimension --{name}=VALUE (names are case-sensitive) or a default value"
    used, anything = set(), False
    if triton_kernel is not None:
        required, named, _ = _triton_setup_args(triton_kernel)
        missing = sorted(required - set(dims) - {"seed"})
        if missing:
            raise UsageError(f"kernel.py: setup() requires {', '.join(map(repr, missing))}, which no dimension gives "
                             f"(dims given: {', '.join(sorted(dims)) or 'none'}); {dim_hint.format(name=missing[0])}")
        used |= named
        anything = True  # reference() gets setup()'s tensors and the dims: known only once setup() runs
    else:
        role_of = plan.roles(params, getattr(module, "inout", None))
        shapes_attr = getattr(module, "shapes", None)
        setup_fn = getattr(module, "setup", None)
        if setup_fn is not None and not callable(setup_fn):
            raise UsageError("ref.py: setup is defined but is not a function")
        if shapes_attr is not None:
            if not isinstance(shapes_attr, dict):
                raise UsageError(f"ref.py: shapes must be a dict of name -> tuple of dims, got {type(shapes_attr).__name__}")
            for entry in shapes_attr.values():
                items = tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)
                used |= {it for it in items if isinstance(it, str)}
            if setup_fn is None:  # the shapes alone give the buffers: check them now
                plan.plan_buffers(params, dims, role_of, shapes_attr, {}, None)
        scalars = [p.name for p in params if not p.is_pointer]
        used |= set(scalars)
        if setup_fn is None:
            missing = [s for s in scalars if s not in dims]
            if missing:
                raise UsageError(f"scalar parameter(s) {', '.join(map(repr, missing))} of solve() have no value: give "
                                 f"--{missing[0]}=VALUE or --dim {missing[0]}=VALUE (dims given: {', '.join(sorted(dims)) or 'none'}; names are "
                                 f"case-sensitive) or return them from ref.py's setup()")
            plan.resolve_scalars(params, dims, {})
        else:
            named, var_kw = _need(setup_fn, "ref.py: setup()", {*dims, "seed"}, dim_hint)
            used |= named
            anything |= var_kw
        named, var_kw = _need(module.reference, "ref.py: reference()", {p.name for p in params},
                              "reference() receives solve()'s parameters (buffers and scalars) by name")
        used |= named
        anything |= var_kw
    wm = getattr(module, "workload_model", None)
    if wm is not None:
        if not callable(wm):
            raise UsageError("ref.py: workload_model is defined but is not a function")
        if triton_kernel is None:  # a Triton kernel's scalars come from its setup(): known only once it runs
            named, _ = _need(wm, "ref.py: workload_model()", set(dims) | {p.name for p in params if not p.is_pointer},
                             dim_hint)
            used |= named  # its **kwargs receive every dimension by contract, so they are no sign of use
    unused = [] if anything else sorted(d for d in dims if d not in used)
    warnings = [f"dimension --{d} is used by nothing (solve()'s scalars, ref.py's shapes, setup(), reference(), "
                f"workload_model()): is the name right?" for d in unused]
    return {"unused_dims": unused, "warnings": warnings}


_CPU_SKIP_MARKERS = ("cuda", "nvidia", "gpu", "no module named 'torch'", "no module named 'triton'",
                     "torch is not installed", "install torch")


def _skip_reason(e):
    """Why the reference could not run on the CPU, when that is the machine's fault and not the contract's."""
    cause = e.cause if isinstance(e, RefError) else e
    text = f"{type(cause).__name__}: {cause}"
    if isinstance(cause, ImportError) or any(m in text.lower() for m in _CPU_SKIP_MARKERS):
        return text
    return None


def _memory_limit_bytes():
    """What `kopt check`'s CPU run of the reference may map: KOPT_CHECK_MAX_GB, else three quarters of this machine's
    memory (at --n=2147483647 a reference grew to 24 GB and was killed with nothing said)."""
    gb = os.environ.get("KOPT_CHECK_MAX_GB")
    if gb:
        return int(float(gb) * (1 << 30))
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4)
    except (ValueError, OSError, AttributeError):
        return None


def _out_of_memory(e):
    cause = e.cause if isinstance(e, RefError) else e
    text = f"{type(cause).__name__}: {cause}"
    return isinstance(cause, MemoryError) or "can't allocate memory" in text or "not enough memory" in text.lower()


# The buffers of a CPU run may take at most this share of the address-space limit: the reference's temporaries,
# numpy's copies of the inputs and Python itself need the rest.
BUFFER_SHARE = 4
# Dimensions of a setup() (whose buffers only it knows) below this size buffer nothing worth scaling.
SETUP_SCALE_MIN = 256


def scale_dims(dims, names, factor):
    """The dims with each of `names` divided by `factor` (a power of two), kept a multiple of its own power-of-two
    alignment up to 256 (a tile multiple stays one) and at least that alignment. Pure."""
    out = dict(dims)
    for k in names:
        v = dims[k]
        align = min(v & -v, 256)
        out[k] = max(align, (v // factor) // align * align)
    return out


def _buffer_sizing(ref, params, dims, triton_kernel, ptr_size):
    """(the dims that size a buffer, dims -> the buffers' bytes or None where only setup() knows them).
    ref.py's shapes name their dims; a guessed size is the product of the two largest dims; a setup() (ref.py's or a
    Triton kernel's) sizes its buffers from the dims it takes, so those of at least SETUP_SCALE_MIN are scaled."""
    if ptr_size is not None:
        return [], None
    if triton_kernel is None:
        module = refmod.load(ref)
        if getattr(module, "setup", None) is None:
            shapes_attr = getattr(module, "shapes", None)
            role_of = plan.roles(params, getattr(module, "inout", None))
            if shapes_attr:
                names = sorted({it for e in shapes_attr.values() for it in plan._shape_items(e)
                                if isinstance(it, str) and it in dims})
            else:
                names = [k for k, _ in sorted(dims.items(), key=lambda kv: -kv[1])[:2]]

            def nbytes(d):
                bufs, _ = plan.plan_buffers(params, d, role_of, shapes_attr, {}, None)
                return sum(b.nbytes for b in bufs)
            return names, nbytes
        info = _required_and_named(module.setup)
        takes = set(dims) if info is None or info[2] else info[1]
    else:
        _, named, var_kw = _triton_setup_args(triton_kernel)
        takes = set(dims) if var_kw else named
    return sorted(k for k in dims if k in takes and dims[k] >= SETUP_SCALE_MIN), None


def _gb(n):
    return f"{n / (1 << 30):.1f} GB"


def run_on_cpu(ref, params, dims, triton_kernel=None, ptr_size=None):
    """Runs the reference once on the CPU; returns {"reference": "ran"|"skipped", ...}. Its address space is bounded
    (_memory_limit_bytes), and where the dims make it too large for that (its buffers over 1/BUFFER_SHARE of the
    bound, or out of memory under it), it runs at scaled dims (scale_dims: every dim that sizes a buffer divided by a
    common power of two), said in "scaled_dims". Where no scaling fits, an error naming the dims, never a kill."""
    limit = _memory_limit_bytes()
    previous = None
    try:
        import resource
        previous = resource.getrlimit(resource.RLIMIT_AS)
        if limit and (previous[0] == resource.RLIM_INFINITY or previous[0] > limit):
            resource.setrlimit(resource.RLIMIT_AS, (limit, previous[1]))
    except (ImportError, ValueError, OSError):
        previous = None
    try:
        return _run_scaled(ref, params, dims, triton_kernel, ptr_size, limit)
    finally:
        if previous is not None:
            resource.setrlimit(resource.RLIMIT_AS, previous)


class _OutOfMemory(Exception):
    pass


def _run_scaled(ref, params, dims, triton_kernel, ptr_size, limit):
    names, nbytes = _buffer_sizing(ref, params, dims, triton_kernel, ptr_size)
    budget = limit // BUFFER_SHARE if limit else None
    needed = nbytes(dims) if nbytes else None
    factor = 1
    if needed is not None and budget is not None and needed > budget and names:
        while factor < (1 << 40) and nbytes(scale_dims(dims, names, factor)) > budget:
            factor *= 2
    tried, run_dims = [], dims
    while True:
        run_dims = scale_dims(dims, names, factor)
        too_big = needed is not None and budget is not None and run_dims != dims and nbytes(run_dims) > budget
        if run_dims in tried or too_big:
            break  # scaling changes nothing any more, or even the smallest dims exceed the budget
        tried.append(run_dims)
        if run_dims != dims:
            try:
                static_check(ref, params, run_dims, triton_kernel)  # the contract holds at the scaled dims too
            except UsageError:
                break  # it does not at smaller dims: no scaling works
        try:
            result = _run_on_cpu(ref, params, run_dims, triton_kernel, ptr_size)
        except _OutOfMemory:
            if not names:
                break
            factor *= 2 if needed is not None else 4
            continue
        if run_dims != dims:
            result["scaled_dims"] = {k: v for k, v in run_dims.items() if v != dims[k]}
            result["given_bytes"] = needed
            result["limit_bytes"] = limit
        return result
    where = " ".join(f"--{k}={v}" for k, v in dims.items())
    need = f" (its buffers alone take {_gb(needed)})" if needed else ""
    scaled = (f"; at scaled dims ({' '.join(f'{k}={v}' for k, v in run_dims.items() if v != dims[k])}) it does not "
              f"fit either" if run_dims != dims else
              "; no dimension sizes its buffers, so it cannot be run at scaled dims" if not names else "")
    raise DimsError(f"the reference at {where}{need} needs more memory than kopt check lets it use on this machine "
                    f"({_gb(limit or 0)}; KOPT_CHECK_MAX_GB sets it){scaled}: give smaller dimensions, or check the "
                    f"contract alone with --static")


def _run_on_cpu(ref, params, dims, triton_kernel, ptr_size):
    with tempfile.TemporaryDirectory(prefix="kopt-check-") as out:
        try:
            if triton_kernel is not None:
                summary = triton_golden.generate(triton_golden.TritonOptions(
                    kernel=triton_kernel, ref=ref, dims=dims, seeds=1, out=out, device="cpu"))
            else:
                summary = golden.generate(golden.Options(ref=ref, params=params, dims=dims, seeds=1, out=out,
                                                         ptr_size=ptr_size, device="cpu"))
        except (UsageError, RefError, MemoryError, RuntimeError) as e:
            if _out_of_memory(e):
                raise _OutOfMemory() from e
            if not isinstance(e, (UsageError, RefError)):
                raise
            reason = _skip_reason(e)
            if reason is None:
                raise
            return {"reference": "skipped", "reason": reason}
        except ImportError as e:
            return {"reference": "skipped", "reason": f"{type(e).__name__}: {e}"}
    return {"reference": "ran", "backend": summary["backend"], "device": summary["device"],
            "buffers": summary["buffers"], "sizes_guessed": summary["sizes_guessed"],
            "elapsed_s": summary["elapsed_s"]}


def check(ref, params, dims, triton_kernel=None, run=False, ptr_size=None):
    try:
        result = {"status": "ok", **static_check(ref, params, dims, triton_kernel)}
    except RefError as e:
        # A module ref.py imports is not installed here (torch on a laptop): the machine's gap, not the contract's.
        if e.where == "importing ref.py" and isinstance(e.cause, ModuleNotFoundError):
            return {"status": "module_missing", "module": e.cause.name, "reason": f"{type(e.cause).__name__}: {e.cause}",
                    "ref": os.path.abspath(ref), "reference": "not run", "warnings": []}
        raise
    if run:
        result.update(run_on_cpu(ref, params, dims, triton_kernel, ptr_size))
    else:
        result["reference"] = "not run"
    result["ref"] = os.path.abspath(ref)
    return result
