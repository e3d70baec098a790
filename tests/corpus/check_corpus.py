#!/usr/bin/env python3
"""Checks the third-party kernel corpus (examples/corpus, issue 35) from the outside, as a user would run it.

For every corpus kernel:
and where the project's sources are fetched (scripts/corpus/fetch.py):
- `kopt annotate KERNEL` prints exactly tests/data/corpus_annotate/<name>.txt (the reviewed fixture; annotate reads
  the wrapper and the local files it includes, the project's launcher among them); `--update-fixtures` rewrites the
  fixtures instead (review the diff);
- `kopt check KERNEL --ref ref.py <the check: dims of dims.txt> <its flags:>` passes: the contract, the reference run
  once on the CPU, and for a CUDA wrapper its compile with nvcc as bench builds it (sm_90, sm_90a and CUTLASS's flags
  for CUTLASS kernels, the extra include folders of `flags:`); a Triton wrapper only where torch and triton (and the
  project's imports) are installed.
A kernel whose project is not fetched, or whose toolchain is missing (nvcc, the CUTLASS headers, torch and
triton), is skipped with the reason. Exit status: 0 passed (some may be skipped), 1 failed, 77 everything skipped.
Usage: check_corpus.py --kopt build/kopt [--only NAME]... [--jobs N] [--no-compile] [--update-fixtures]
"""
import argparse
import concurrent.futures
import importlib.util
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO / "examples" / "corpus"
FETCHED = CORPUS / "_fetched"
FIXTURES = REPO / "tests" / "data" / "corpus_annotate"

# corpus folder prefix -> the fetched package folder, and the Python modules a Triton wrapper of it imports
PROJECTS = {
    "cutlass_": ("nvidia-cutlass-4.2.0.0", []),
    "flashinfer_": ("flashinfer-python-0.5.3", []),
    "liger_": ("liger-kernel-0.8.5", ["torch", "triton", "packaging"]),
    "fla_": ("fla-core-0.6.0", ["torch", "triton", "packaging", "einops"]),
    "cub_": (None, []),  # CUB comes with the CUDA toolkit: nothing to fetch
}


def read_dims(path):
    out = {"typical": [], "check": [], "flags": []}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        if key.strip() in out:
            out[key.strip()] = shlex.split(value)
    return out


def project_of(name):
    for prefix, proj in PROJECTS.items():
        if name.startswith(prefix):
            return proj
    return None


def cutlass_include():
    env = os.environ.get("CUTLASS_PATH")
    if env and (pathlib.Path(env) / "include" / "cutlass" / "cutlass.h").is_file():
        return pathlib.Path(env) / "include"
    spec = importlib.util.find_spec("cutlass_library")
    if spec and spec.submodule_search_locations:
        inc = pathlib.Path(list(spec.submodule_search_locations)[0]) / "source" / "include"
        if (inc / "cutlass" / "cutlass.h").is_file():
            return inc
    return None


def find_nvcc():
    default = "/usr/local/cuda/bin/nvcc"
    return shutil.which("nvcc") or (default if os.access(default, os.X_OK) else None)


def check_one(name, kopt, args, tmp):
    d = CORPUS / name
    proj = project_of(name)
    if proj is None:
        return "fail", f"{name}: no project prefix known to check_corpus.py"
    fetched, modules = proj
    dims = read_dims(d / "dims.txt")
    if not dims["check"] or not dims["typical"]:
        return "fail", "dims.txt needs typical: and check: lines"
    flags = [f if not f.startswith("examples/") else str(REPO / f) for f in dims["flags"]]
    notes = []
    kernel = d / ("kernel.cu" if (d / "kernel.cu").is_file() else "kernel.py")
    # kopt annotate reads the local files a wrapper includes (a project's launcher): without the project, nothing to check
    if fetched is not None and not (FETCHED / fetched / ".fetched.json").is_file():
        return "skip", f"{fetched} is not fetched (python3 scripts/corpus/fetch.py)"
    # the fixture: kopt annotate on the wrapper as it is
    r = subprocess.run([kopt, "annotate", str(kernel.relative_to(REPO))], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    got = f"$ kopt annotate {kernel.relative_to(REPO)}\n(exit {r.returncode})\n{r.stdout}" + (
        f"--- stderr\n{r.stderr}" if r.stderr.strip() else "")
    fixture = FIXTURES / f"{name}.txt"
    if args.update_fixtures:
        FIXTURES.mkdir(parents=True, exist_ok=True)
        fixture.write_text(got)
        notes.append("fixture written")
    elif not fixture.is_file():
        return "fail", f"no fixture {fixture.relative_to(REPO)} (run with --update-fixtures, then review it)"
    elif fixture.read_text() != got:
        return "fail", f"kopt annotate differs from {fixture.relative_to(REPO)}:\n{got}"
    else:
        notes.append("annotate fixture ok")
    # kopt check compiles a CUDA wrapper itself where nvcc is (as bench builds it: the dims.txt flags, sm_90a and
    # CUTLASS's flags for CUTLASS kernels); --no-compile checks the contract statically instead.
    extra = []
    if kernel.suffix == ".cu":
        if args.no_compile:
            extra = ["--static"]
            notes.append("compile skipped (--no-compile: kopt check --static)")
        elif not find_nvcc():
            return "skip", ", ".join(notes + ["nvcc not found"])
        elif name.startswith("cutlass_") and cutlass_include() is None:
            return "skip", ", ".join(notes + ["the CUTLASS headers are not installed (nvidia-cutlass, or CUTLASS_PATH)"])
    else:
        missing = [m for m in modules if importlib.util.find_spec(m) is None]
        if missing:
            return "skip", ", ".join(notes + ["kopt check needs " + ", ".join(missing)])
    r = subprocess.run([kopt, "check", str(kernel), "--ref", str(d / "ref.py")] + dims["check"] + flags + extra, cwd=REPO,
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        return "fail", f"kopt check exit {r.returncode}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    if kernel.suffix == ".cu" and not extra:
        if "  compile    OK" not in r.stdout:
            return "fail", "kopt check did not say it compiled the kernel:\n" + r.stdout[-3000:]
        notes.append("compiled by kopt check")
    notes.append("kopt check passed")
    return "pass", ", ".join(notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kopt", required=True)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--update-fixtures", action="store_true")
    args = ap.parse_args()
    kopt = str(pathlib.Path(args.kopt).resolve())
    names = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and (p / "ref.py").is_file())
    if args.only:
        unknown = [n for n in args.only if n not in names]
        if unknown:
            print("check_corpus.py: unknown kernel(s): " + ", ".join(unknown), file=sys.stderr)
            return 1
        names = [n for n in names if n in args.only]
    counts = {"pass": 0, "fail": 0, "skip": 0}
    with tempfile.TemporaryDirectory(prefix="kopt-corpus-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {n: pool.submit(check_one, n, kopt, args, pathlib.Path(tmp)) for n in names}
            for n in names:
                try:
                    status, why = futures[n].result()
                except Exception as e:  # a timeout or an OS error is a failure of that kernel
                    status, why = "fail", repr(e)
                counts[status] += 1
                print(f"{status.upper():4} {n}: {why}", flush=True)
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    if counts["fail"]:
        return 1
    return 77 if counts["pass"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
