"""Command line: `golden`, `check`, `inspect`, `triton-run`, `ray-worker` and `fake-worker`. Exit codes follow kopt's
table: 0 success, 4 input/contract error (bad usage, or an error inside ref.py, whose traceback goes to stderr), 1 an
internal error, 130 Ctrl-C."""

import argparse
import contextlib
import json
import os
import sys
import time
import traceback

from . import check, fake_worker, golden, inspect_cmd, ray_worker, signature, triton_golden, triton_run
from .plan import parse_dims
from .errors import DimsError, RefError, UsageError

EXIT_OK, EXIT_OTHER, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 4, 130
PRELOADS = ("imports", "cuda")  # golden-batch --preload's values (_preload)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2; kopt's usage errors are 4
        raise UsageError(f"{self.prog}: {message}")


def _parser():
    p = _Parser(prog="python3 -m kopt_harness", description="kopt's golden-data harness (docs/HARNESS.md)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    g = sub.add_parser("golden", help="write inputs and expected outputs from ref.py")
    g.add_argument("--ref", required=True, help="the reference module (ref.py)")
    g.add_argument("--signature", help="solve()'s signature as JSON (written by kopt), for a CUDA kernel")
    g.add_argument("--triton-kernel", help="a Triton kernel.py: its setup() gives the buffers (no --signature)")
    g.add_argument("--dims", default="{}", help='dimensions as a JSON object, e.g. \'{"M":64,"N":32}\'')
    g.add_argument("--seeds", type=int, default=3, help="how many seeds (default 3)")
    g.add_argument("--seed-base", type=int, default=0, help="first seed (default 0)")
    g.add_argument("--out", required=True, help="output folder")
    g.add_argument("--ptr-size", type=int, default=None, help="elements per buffer when sizes are guessed")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the reference runs")
    g.add_argument("--time-reference", action="store_true", help="also time the reference (first seed)")
    g.add_argument("--time-budget-s", type=float, default=10.0, help="time budget for the reference timing")
    g.add_argument("--sealed-dir", default=None,
                   help="also write a sealed seed (a secret seed number) as SEALED_DIR/seed.safetensors (kopt passes it)")
    g.add_argument("--ephemeral-socket", type=int, default=None,
                   help="instead of golden data: the ephemeral seed (a secret seed number), its bytes in a sealed "
                        "memfd sent on this inherited Unix socket; no file is written (kopt passes it)")
    b = sub.add_parser("golden-batch", help="several `golden` requests in one process (one Python and torch start)")
    b.add_argument("--requests", required=True,
                   help="a JSON file: a list of requests, each the argument list of a `golden` command; or - : "
                        "one request a line on stdin (a JSON argument list), answered a line each as it is made, "
                        "until an empty line or the end of stdin (kopt keeps one such process for a whole run)")
    b.add_argument("--preload", nargs="?", const="cuda", default=None, choices=PRELOADS,
                   help="before the first request: cuda (the default when given bare) imports torch and starts CUDA; "
                        "imports only imports torch and makes no CUDA call, so the process touches no GPU until a "
                        "request comes (a stream started early pays them while kopt does other work)")
    c = sub.add_parser("check", help="the contract without a GPU: ref.py, dims, shapes (kopt check)")
    c.add_argument("--ref", required=True, help="the reference module (ref.py)")
    c.add_argument("--signature", help="solve()'s signature as JSON (written by kopt), for a CUDA kernel")
    c.add_argument("--triton-kernel", help="a Triton kernel.py (no --signature)")
    c.add_argument("--dims", default="{}", help="dimensions as a JSON object")
    c.add_argument("--ptr-size", type=int, default=None, help="elements per buffer when sizes are guessed")
    c.add_argument("--run", action="store_true", help="also run the reference once on the CPU (numpy or torch CPU)")
    i = sub.add_parser("inspect", help="print a golden folder's manifest and tensors")
    i.add_argument("dir", help="the golden folder")
    i.add_argument("--json", action="store_true", help="print the tensor summary as JSON")
    t = sub.add_parser("triton-run", help="the measuring child for a Triton kernel (docs/TRITON.md)")
    t.add_argument("--kernel", required=True, help="the Triton kernel.py")
    t.add_argument("--golden", help="golden data folder (made by golden --triton-kernel)")
    t.add_argument("--out", required=True, help="where the result JSON is written")
    t.add_argument("--mode", default="check", choices=list(triton_run.MODES))
    t.add_argument("--config", action="append", default=[],
                   help="a configuration as a JSON object (or a JSON list of them); repeat for --mode paired")
    t.add_argument("--atol", type=float, default=-1.0)
    t.add_argument("--rtol", type=float, default=-1.0)
    t.add_argument("--max-time-s", type=float, default=5.0, help="timing budget (default 5)")
    t.add_argument("--target-ci", type=float, default=0.01, help="stop when the median's 95%% CI is within this")
    t.add_argument("--min-samples", type=int, default=10)
    t.add_argument("--max-samples", type=int, default=2000)
    t.add_argument("--rounds", type=int, default=40, help="paired mode: rounds at most")
    t.add_argument("--l2", default="cold", help="cold: flush the L2 before every sample (default); warm: do not")
    t.add_argument("--timing-method", default="auto",
                   help="auto (default), events_behind_sleep, events_default_stream or events_with_device_sync_before_stop")
    t.add_argument("--device", default=os.environ.get("KOPT_TRITON_DEVICE", "cuda"), choices=["cuda", "cpu", "numpy"],
                   help="cuda (default; $KOPT_TRITON_DEVICE overrides the default); cpu and numpy exist for tests")
    t.add_argument("--dump-cubin", help="write the cubins Triton compiled into this folder")
    t.add_argument("--triton-cache", metavar="DIR",
                   help="the Triton cache folder to use (made when missing, kept) instead of a fresh one: a compile-mode "
                        "child's, whose kernels a later child then finds compiled")
    t.add_argument("--dims", help="mode compile: setup()'s dimensions as a JSON object, or a JSON array of them "
                                  "(one setup() and one launch at each: a constexpr dimension compiles a kernel a value)")
    t.add_argument("--seed", type=int, default=0, help="mode compile: the seed given to setup()")
    t.add_argument("--also-check", action="append", default=[], metavar="GOLDEN",
                   help="mode time: another case's golden data, checked in this process after the timed run (every "
                        "seed and the sealed seed); repeat per case; each case's verdict in the result's \"cases\"")
    t.add_argument("--ephemeral-fd", type=int, default=None,
                   help="check mode: the ephemeral seed's memfd, inherited; handed to the judge (which serves it in "
                        "the sealed seed's place) and closed before the kernel is imported (kopt passes it)")
    r = sub.add_parser("ray-worker", help="a measuring worker whose `kopt __worker` runs on a Ray cluster "
                                          "(docs/MULTI_GPU.md)")
    ray_worker.add_arguments(r)
    sub.add_parser("fake-worker", help="a stand-in for `kopt __worker` without a GPU, for tests")
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


def _dims_json(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f'--dims is not valid JSON ({e}); write e.g. \'{{"M":64,"N":32}}\'') from None


def _dims(text):
    return parse_dims(_dims_json(text))


def _dims_list(text):
    """triton-run --dims: one JSON object of dimensions, or (mode compile) a non-empty JSON array of them."""
    obj = _dims_json(text)
    if isinstance(obj, list):
        if not obj:
            raise UsageError("--dims: an empty array; give one object of dimensions at least")
        return [parse_dims(d) for d in obj]
    return parse_dims(obj)


def _golden(args):
    if (args.signature is None) == (args.triton_kernel is None):
        raise UsageError("golden needs exactly one of --signature SIG.json (a CUDA kernel) and "
                         "--triton-kernel kernel.py (a Triton kernel)")
    dims = _dims(args.dims)
    if args.triton_kernel is not None:
        opts = triton_golden.TritonOptions(kernel=args.triton_kernel, ref=args.ref, dims=dims, seeds=args.seeds,
                                           out=args.out, device=args.device, time_reference=args.time_reference,
                                           seed_base=args.seed_base, time_budget_s=args.time_budget_s,
                                           sealed_dir=args.sealed_dir, ephemeral_socket=args.ephemeral_socket)
        if args.ptr_size is not None:
            raise UsageError("--ptr-size does not apply to a Triton kernel: its setup() gives every buffer")
        with _stdout_to_stderr():
            summary = (triton_golden.ephemeral(opts) if args.ephemeral_socket is not None
                       else triton_golden.generate(opts))
        print(json.dumps(summary), flush=True)
        return summary
    opts = golden.Options(ref=args.ref, params=signature.load(args.signature), dims=dims,
                          seeds=args.seeds, out=args.out, ptr_size=args.ptr_size, device=args.device,
                          time_reference=args.time_reference, seed_base=args.seed_base,
                          time_budget_s=args.time_budget_s, sealed_dir=args.sealed_dir,
                          ephemeral_socket=args.ephemeral_socket)
    with _stdout_to_stderr():
        summary = golden.ephemeral(opts) if args.ephemeral_socket is not None else golden.generate(opts)
    print(json.dumps(summary), flush=True)
    return summary


def _is_request(r):
    return isinstance(r, list) and all(isinstance(a, str) for a in r)


def _preload(what):
    """What the first request would otherwise wait for. "imports": torch imported and nothing else, no CUDA call at all
    (not even torch.cuda.is_available(), which initialises the driver): torch starts CUDA lazily, at its first CUDA
    call, and `import torch` makes none, so until a request comes this process holds no CUDA context and runs nothing
    on any GPU (kopt starts it so beside the gates and the search of a run whose golden data was cached: issue 36).
    "cuda": torch's CUDA context too, when there are both (a stream whose first request follows at once)."""
    try:
        import torch  # noqa: F401 (the import is the point)
        if what == "cuda" and torch.cuda.is_available():
            torch.cuda.init()
    except Exception:  # noqa: BLE001 (a request that needs torch says what is wrong)
        pass


def _log_stream(what):
    """One line on stderr: `what`, stamped with the seconds since the harness's import began."""
    t0 = sys.modules[__package__].IMPORT_T0
    print(f"kopt_harness: golden-batch: {what} at {time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)


def _release_cached_memory():
    """A long-lived stream gives back what torch's allocator kept, so it holds no GPU memory between requests."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001
        pass


def _stream_requests():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            return
        try:
            req = json.loads(line)
        except ValueError as e:
            req = e
        yield req


def _golden_batch(args):
    """Each request as `golden` would run it, one summary line each on stdout, in order: the request's own summary,
    or {"status": "error", "exit_code": N, "message": ...} (its details on stderr); one request's failure does not
    stop the others."""
    if args.preload:
        _preload(args.preload)
    streamed = args.requests == "-"
    if streamed:  # the run's log (golden_stream.log): when each part of a stream's wall ended, from its import
        _log_stream(f"preloaded ({args.preload or 'nothing'})")
    if args.requests == "-":
        requests = _stream_requests()
    else:
        try:
            with open(args.requests, encoding="utf-8") as f:
                requests = json.load(f)
        except (OSError, ValueError) as e:
            raise UsageError(f"--requests {args.requests}: {e}") from None
        if not isinstance(requests, list) or not all(_is_request(r) for r in requests):
            raise UsageError(f"--requests {args.requests}: expected a JSON list of argument lists")
    for req in requests:
        code, message = EXIT_OK, ""
        try:
            if not _is_request(req):  # a streamed line that is not an argument list: that line fails
                raise UsageError(f"--requests -: expected a JSON argument list a line, not {str(req)[:80]!r}")
            t = time.perf_counter()
            summary = _golden(_parser().parse_args(["golden", *req]))
            if args.requests == "-":
                _release_cached_memory()
                phases = summary.get("phase_seconds") or {}
                parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(phases.items(), key=lambda kv: -kv[1])
                                  if v >= 0.01)
                _log_stream(f"request done in {time.perf_counter() - t:.2f} s" + (f" ({parts})" if parts else ""))
            continue
        except DimsError as e:
            code, message = EXIT_INPUT, f"dimension error: {e}"
        except UsageError as e:
            code, message = EXIT_INPUT, str(e)
        except RefError as e:
            traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__, file=sys.stderr)
            code, message = EXIT_INPUT, f"error in {e.file}: {e}"
        except Exception as e:  # noqa: BLE001 (a bug in the harness: this request fails, the others go on)
            traceback.print_exc(file=sys.stderr)
            code, message = EXIT_OTHER, f"internal error: {type(e).__name__}: {e}"
        print(f"kopt_harness: golden-batch: {message}", file=sys.stderr)
        print(json.dumps({"status": "error", "exit_code": code, "message": message}), flush=True)


def _check(args):
    if (args.signature is None) == (args.triton_kernel is None):
        raise UsageError("check needs exactly one of --signature SIG.json (a CUDA kernel) and "
                         "--triton-kernel kernel.py (a Triton kernel)")
    params = signature.load(args.signature) if args.signature is not None else []
    with _stdout_to_stderr():
        result = check.check(args.ref, params, _dims(args.dims), args.triton_kernel, args.run, args.ptr_size)
    print(json.dumps(result), flush=True)


def _configs(texts):
    out = []
    for i, text in enumerate(texts):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"--config #{i} is not valid JSON ({e}); write e.g. '{{\"BLOCK\": 128}}'") from None
        out.extend(value if isinstance(value, list) else [value])
    return out


def _triton_run(args):
    """Writes the result JSON and leaves at once (os._exit): after a CUDA error the context is broken, and
    torch's or triton's teardown must not hang or crash a run whose result is already written."""
    opts = triton_run.RunOptions(
        kernel=args.kernel, out=args.out, golden=args.golden, mode=args.mode, configs=_configs(args.config),
        atol=args.atol, rtol=args.rtol, max_time_s=args.max_time_s, target_ci=args.target_ci,
        min_samples=args.min_samples, max_samples=args.max_samples, rounds=args.rounds, device=args.device,
        dump_cubin=args.dump_cubin, triton_cache=args.triton_cache, dims=_dims_list(args.dims) if args.dims is not None else None, seed=args.seed,
        l2=args.l2, timing_method=args.timing_method, ephemeral=args.ephemeral_fd is not None,
        also_check=args.also_check)
    triton_run.check_options(opts)
    result, rc = triton_run.run(opts)
    triton_run.write_result(args.out, result)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


def main(argv=None):
    try:
        args = _parser().parse_args(argv)
        if args.command == "golden":
            _golden(args)
        elif args.command == "golden-batch":
            _golden_batch(args)
        elif args.command == "check":
            _check(args)
        elif args.command == "triton-run":
            _triton_run(args)
        elif args.command == "ray-worker":
            return ray_worker.run(args)
        elif args.command == "fake-worker":
            return fake_worker.main()
        else:
            inspect_cmd.run(args.dir, as_json=args.json)
        return EXIT_OK
    except DimsError as e:
        print(f"kopt_harness: dimension error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as e:
        print(f"kopt_harness: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except RefError as e:
        print(f"kopt_harness: error in {e.file}: {e}", file=sys.stderr)
        traceback.print_exception(type(e.cause), e.cause, e.cause.__traceback__, file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("kopt_harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # a bug in the harness itself
        print("kopt_harness: internal error:", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return EXIT_OTHER
