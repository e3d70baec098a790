"""Command line: `golden` and `inspect`. Exit codes follow kopt's table: 0 success, 4 input/contract error
(bad usage, or an error inside ref.py, whose traceback goes to stderr), 1 an internal error, 130 Ctrl-C."""

import argparse
import contextlib
import json
import os
import sys
import traceback

from . import golden, inspect_cmd, signature
from .plan import parse_dims
from .errors import RefError, UsageError

EXIT_OK, EXIT_OTHER, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 4, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2; kopt's usage errors are 4
        raise UsageError(f"{self.prog}: {message}")


def _parser():
    p = _Parser(prog="python3 -m kopt_harness", description="kopt's golden-data harness (docs/HARNESS.md)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    g = sub.add_parser("golden", help="write inputs and expected outputs from ref.py")
    g.add_argument("--ref", required=True, help="the reference module (ref.py)")
    g.add_argument("--signature", required=True, help="solve()'s signature as JSON (written by kopt)")
    g.add_argument("--dims", default="{}", help='dimensions as a JSON object, e.g. \'{"M":64,"N":32}\'')
    g.add_argument("--seeds", type=int, default=3, help="how many seeds (default 3)")
    g.add_argument("--seed-base", type=int, default=0, help="first seed (default 0)")
    g.add_argument("--out", required=True, help="output folder")
    g.add_argument("--ptr-size", type=int, default=None, help="elements per buffer when sizes are guessed")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the reference runs")
    g.add_argument("--time-reference", action="store_true", help="also time the reference (first seed)")
    g.add_argument("--time-budget-s", type=float, default=10.0, help="time budget for the reference timing")
    i = sub.add_parser("inspect", help="print a golden folder's manifest and tensors")
    i.add_argument("dir", help="the golden folder")
    i.add_argument("--json", action="store_true", help="print the tensor summary as JSON")
    return p


@contextlib.contextmanager
def _stdout_to_stderr():
    """While ref.py runs, anything it prints (Python or C level) goes to stderr: stdout carries only the
    one summary line."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _golden(args):
    try:
        dims_obj = json.loads(args.dims)
    except json.JSONDecodeError as e:
        raise UsageError(f'--dims is not valid JSON ({e}); write e.g. \'{{"M":64,"N":32}}\'') from None
    opts = golden.Options(ref=args.ref, params=signature.load(args.signature), dims=parse_dims(dims_obj),
                          seeds=args.seeds, out=args.out, ptr_size=args.ptr_size, device=args.device,
                          time_reference=args.time_reference, seed_base=args.seed_base,
                          time_budget_s=args.time_budget_s)
    with _stdout_to_stderr():
        summary = golden.generate(opts)
    print(json.dumps(summary), flush=True)


def main(argv=None):
    try:
        args = _parser().parse_args(argv)
        if args.command == "golden":
            _golden(args)
        else:
            inspect_cmd.run(args.dir, as_json=args.json)
        return EXIT_OK
    except UsageError as e:
        print(f"kopt_harness: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except RefError as e:
        print(f"kopt_harness: error in ref.py: {e}", file=sys.stderr)
        traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__, file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("kopt_harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # a bug in the harness itself
        print("kopt_harness: internal error:", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return EXIT_OTHER
