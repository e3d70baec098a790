"""Importing the user's ref.py and calling the functions it defines."""

import importlib.util
import inspect
import os
import sys

from .errors import RefError, UsageError

MODULE_NAME = "kopt_ref"


def import_user_module(path, module_name, option, what, error_file=None, origin=None):
    """Imports a user's file (ref.py, kernel.py) as `module_name`, its folder first on sys.path so it can
    import siblings. A missing file is a UsageError naming `option`; an exception while importing (SystemExit
    included) is a RefError about `what`, with its traceback.

    `origin`: the user's file that `path` is a copy of (kopt's KOPT_KERNEL_ORIGIN: a derived space's annotated copy,
    a candidate, in the run directory). The copy runs as the original would: its __file__ is the original's and the
    original's folder is on sys.path after the copy's, so code that finds its package or siblings through __file__
    finds them. The code executed is the copy's (tracebacks name the copy)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"{option} {path}: no such file")
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    origin = os.path.abspath(origin) if origin else None
    if origin == path or (origin and not os.path.isfile(origin)):
        origin = None
    if origin and os.path.dirname(origin) not in sys.path:
        sys.path.insert(sys.path.index(folder) + 1, os.path.dirname(origin))
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{option} {path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    if origin:
        module.__file__ = origin
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:  # SystemExit and KeyboardInterrupt in user code are its errors too
        if isinstance(e, KeyboardInterrupt):
            raise
        sys.modules.pop(module_name, None)
        if error_file is None:
            raise RefError(what, e) from e
        raise RefError(what, e, file=error_file) from e
    return module


def load(path):
    """Imports ref.py as module `kopt_ref`, with its folder first on sys.path so it can import siblings."""
    module = import_user_module(path, MODULE_NAME, "--ref", "importing ref.py")
    if not callable(getattr(module, "reference", None)):
        raise UsageError(f"{os.path.abspath(path)}: defines no function reference(**params); kopt needs one to make expected outputs")
    return module


def accepted_kwargs(fn, where, available):
    """The subset of `available` (a dict) that `fn` takes by keyword: all of it when fn has **kwargs.
    A required parameter that `available` lacks is an error naming it."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return dict(available)
    params = sig.parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return dict(available)
    out = {}
    for p in params:
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            if p.name in available:
                out[p.name] = available[p.name]
            elif p.default is p.empty:
                known = ", ".join(sorted(available)) or "none"
                raise UsageError(f"{where} requires argument {p.name!r}, which kopt cannot supply "
                                 f"(available: {known}); give a dimension --{p.name}=N or give it a default")
        elif p.kind == p.POSITIONAL_ONLY and p.default is p.empty:
            raise UsageError(f"{where} has a positional-only parameter {p.name!r}; kopt passes everything by keyword")
    return out


def call(fn, where, available, file="ref.py"):
    """Calls a ref.py (or kernel.py: `file`) function by keyword; an exception inside it becomes RefError
    (exit 4, traceback)."""
    kwargs = accepted_kwargs(fn, where, available)
    try:
        return fn(**kwargs)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        raise RefError(where, e, file=file) from e
