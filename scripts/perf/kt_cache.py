#!/usr/bin/env python3
"""Kernel Tuner's view of a kopt search space, and the Kernel Tuner cachefile of an exhaustive measurement.

  kt_cache.py MEASUREMENTS.csv --kernel KERNEL.cu --kernel-name NAME --problem-size 4096,4096 --out CACHE.json
              [--derive NAME=EXPR ...] [--sweep DIR | --report REPORT.txt] [--device-name "NVIDIA H200"]

The cachefile is the one Kernel Tuner (1.5.0) writes while tuning (kernel_tuner/util.py: process_cache,
store_cache, close_cache), so that `tune_kernel(..., cache=CACHE.json, simulation_mode=True)` replays any of its
strategies over kopt's measured table without a GPU: the same configurations, the same times, and, per
configuration, the recorded compile and measurement seconds, from which Kernel Tuner's simulation runner adds up
its simulated time.

The space. Kernel Tuner's tune_params are the kernel's `@kopt param` and `@kopt method` dimensions in declared
order (scripts/perf/kopt_space.py), plus any --derive NAME=EXPR (a parameter whose value the others fix, such as
the thread count `block_size_x=(BM/TM)*(BN/TN)` that Kernel Tuner needs to launch the kernel); its restrictions
are the `@kopt constraint`s translated to Python (`/` -> `//`, `&&` -> `and`, ...), one string per top-level
conjunct, plus `NAME - (EXPR) == 0` for each derived parameter. Every translation is checked against kopt's C
semantics on every point of the product of the declared values before anything is written.

A cache entry (kernel_tuner/core.py: compile_and_benchmark):
  * status ok: the parameters, `time` = the table's median_ms (Kernel Tuner's own `time` is a mean of its
    iterations; kopt's median of R samples after an L2 flush is the figure measured), `times` = the runner's
    samples when the sweep directory has them, else [median_ms]; `compile_time`, `verification_time`,
    `benchmark_time` in ms (below); `strategy_time` = `framework_time` = 0; `timestamp`.
  * compile_failed: `__error__` = "CompilationFailedConfig"; any other status (wrong_result, crashed,
    timed_out, cuda_error, not_measured): "RuntimeFailedConfig" (live, Kernel Tuner stops the whole run on a
    wrong result; in a simulation the configuration is a failed one, as kopt's search sees it).
Costs per configuration, in ms:
  * with --sweep DIR (scripts/perf/search_efficiency.sh's output): compile_time = compiled/<i>.json's
    compile.compile_ms (nvcc's wall for that configuration while the sweep compiled --jobs at once; on a build
    cache hit, the nvcc_ms recorded in the cache entry); benchmark_time = costs.csv's measure_ms (the wall of
    each runner process that measured it, shared evenly among its libraries: process start, golden load, the
    check against the golden output, warm-up and timed calls); verification_time = 0 (inside benchmark_time);
  * with --report REPORT.txt only (an older sweep that kept no per-configuration costs): the stage times
    spread evenly, compile_time = compile_s * jobs / N, benchmark_time = measurement_s / N.
"""
import argparse
import csv
import itertools
import json
import os
import re
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kopt_space  # noqa: E402

ERROR_OF_STATUS = {"compile_failed": "CompilationFailedConfig"}  # any other non-ok status: RuntimeFailedConfig


# --- the space, as Kernel Tuner sees it ---------------------------------------------------------------------

PY_LEVEL = {"||": 1, "&&": 2, "u!": 3, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5,
            "*": 6, "/": 6, "%": 6, "u-": 7, "u+": 7}


def level(node):
    return 8 if isinstance(node, int) or node[0] == "name" else PY_LEVEL[node[0]]


def to_python(node):
    """A kopt_space.Expr tree as a Python expression with the parentheses Python's precedence needs: `/` as `//`,
    `&&` `||` `!` as `and` `or` `not`; a comparison inside a comparison is parenthesised (Python would chain
    `a < b == c`), and so is a `not` inside anything tighter than `and` (C's `!` binds tighter than Python's)."""
    if isinstance(node, int):
        return str(node)
    op = node[0]
    if op == "name":
        return node[1]
    mine = PY_LEVEL[op]
    if op in ("u!", "u-", "u+"):
        inner = to_python(node[1])
        if level(node[1]) < mine or (op == "u!" and level(node[1]) == mine):
            inner = f"({inner})"
        return ("not " if op == "u!" else op[1]) + inner
    left, right = to_python(node[1]), to_python(node[2])
    if level(node[1]) < mine or (mine == 4 and level(node[1]) == 4):
        left = f"({left})"
    if level(node[2]) <= mine:  # left-associative: an equal level on the right keeps its parentheses
        right = f"({right})"
    py = {"&&": "and", "||": "or", "/": "//"}.get(op, op)
    return f"{left} {py} {right}"


def conjuncts(node):
    """The top-level && operands of an expression tree."""
    if not isinstance(node, int) and node[0] == "&&":
        return conjuncts(node[1]) + conjuncts(node[2])
    return [node]


def math_prod(values):
    p = 1
    for v in values:
        p *= v
    return p


def py_eval(text, env):
    try:
        return eval(text, {"__builtins__": {}}, dict(env))  # noqa: S307 (our own translation of the annotations)
    except ZeroDivisionError:
        return None


class KtSpace:
    """tune_params (name -> list of values, declared order, derived last), restrictions (Python strings) and the
    valid configurations (dicts), for a kernel's annotations and derived parameters."""

    def __init__(self, kernel_text, derive=None):
        dims, constraints = kopt_space.parse_annotations(kernel_text)
        self.dims = [d[0] for d in dims]
        self.defaults = {d[0]: d[2] for d in dims}
        derive = dict(derive or {})
        derived_expr = {}
        for name, text in derive.items():
            if not name.isidentifier() or name in self.dims:
                raise ValueError(f"--derive {name}: not a new identifier (the dimensions are {', '.join(self.dims)})")
            derived_expr[name] = kopt_space.Expr(text)
            unknown = derived_expr[name].names() - set(self.dims)
            if unknown:
                raise ValueError(f"--derive {name}={text}: unknown name(s) {', '.join(sorted(unknown))}")
        self.configs = []
        for env in kopt_space.enumerate_space(dims, constraints):
            try:
                extra = {n: e.eval(env) for n, e in derived_expr.items()}
            except ZeroDivisionError:
                raise ValueError(f"a derived parameter divides by zero at {env}")
            self.configs.append({**env, **extra})
        if not self.configs:
            raise ValueError("the kernel's annotations declare no valid configuration")
        self.tune_params = {name: list(values) for name, values, _ in dims}
        for name in derived_expr:
            self.tune_params[name] = sorted({c[name] for c in self.configs})
        self.restrictions = [to_python(c) for expr in constraints for c in conjuncts(expr.tree)]
        # Written as `NAME - (EXPR) == 0`: from `block_size_x == ((BM // TM) * (BN // TN))` Kernel Tuner 1.5.0 (its
        # python-constraint2 parser) builds an empty space; this form gives the right one (kt_simulate.py checks
        # that Kernel Tuner's space equals kopt's before it simulates anything).
        self.restrictions += [f"{name} - ({to_python(e.tree)}) == 0" for name, e in derived_expr.items()]
        self._check(dims, constraints, derived_expr)

    def _check(self, dims, constraints, derived_expr):
        """The Python restrictions accept exactly kopt's valid configurations on the whole product."""
        names = list(self.tune_params)
        if math_prod(len(v) for v in self.tune_params.values()) > 2_000_000:
            return  # too large to walk; the restrictions are then trusted as translated
        valid = {self.key(c) for c in self.configs}
        for combo in itertools.product(*self.tune_params.values()):
            env = dict(zip(names, combo))
            py_ok = all(bool(py_eval(r, env)) for r in self.restrictions)
            if py_ok != (",".join(map(str, combo)) in valid):
                raise ValueError(f"the Python restrictions {self.restrictions} disagree with the annotations at {env}")

    def key(self, config):
        """Kernel Tuner's cache key: the values in tune_params order, comma-separated."""
        return ",".join(str(config[n]) for n in self.tune_params)


# --- costs per configuration ----------------------------------------------------------------------------------

def read_report_stages(path):
    """(compile_s, golden_s, measure_s, jobs) from a search_efficiency.sh report.txt."""
    text = open(path).read()
    m = re.search(r"stages: compile (\d+(?:\.\d+)?) s, golden data (\d+(?:\.\d+)?) s, measurement (\d+(?:\.\d+)?) s", text)
    if not m:
        raise ValueError(f"{path}: no 'stages: compile ... s, golden data ... s, measurement ... s' line")
    j = re.search(r"; (\d+) compile jobs", text)
    return float(m.group(1)), float(m.group(2)), float(m.group(3)), int(j.group(1)) if j else 1


def read_report_meta(path):
    """gpu name and date from a report.txt (either may be None)."""
    text = open(path).read()
    gpu = re.search(r"^gpu: ([^,\n]+)", text, re.M)
    date = re.search(r"^date: (\S+)", text, re.M)
    return (gpu.group(1).strip() if gpu else None), (date.group(1) if date else None)


def compile_ms_of(compiled_json):
    """compile.compile_ms of a `kopt sass --compile-only --json` file; on a build cache hit the cached nvcc_ms."""
    c = compiled_json.get("compile") or {}
    ms = c.get("compile_ms")
    if c.get("cache_hit"):
        lib = compiled_json.get("library") or c.get("library") or ""
        try:
            with open(os.path.join(os.path.dirname(lib), "entry.json")) as f:
                ms = json.load(f).get("nvcc_ms", ms)
        except (OSError, ValueError):
            pass
    return ms


def sweep_costs(sweep_dir, n):
    """index -> {"compile_ms", "measure_ms", "samples_ms"} from a sweep directory (missing pieces left out)."""
    out = {i: {} for i in range(n)}
    lib_of = {}
    for i in range(n):
        try:
            with open(os.path.join(sweep_dir, "compiled", f"{i}.json")) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        ms = compile_ms_of(j)
        if ms is not None:
            out[i]["compile_ms"] = float(ms)
        if j.get("library"):
            lib_of[j["library"]] = i
    costs = os.path.join(sweep_dir, "costs.csv")
    if os.path.exists(costs):
        with open(costs, newline="") as f:
            for r in csv.DictReader(f):
                i = int(r["index"])
                if i in out and r.get("measure_ms"):
                    out[i]["measure_ms"] = float(r["measure_ms"])
    runs = os.path.join(sweep_dir, "runs")
    if os.path.isdir(runs):
        for name in sorted(os.listdir(runs)):
            try:
                with open(os.path.join(runs, name)) as f:
                    res = json.load(f)
            except (OSError, ValueError):
                continue
            for e in res.get("libs") or []:
                i = lib_of.get(e.get("lib"))
                if i is not None and e.get("status") == "ok" and e.get("samples_ms"):
                    out[i]["samples_ms"] = list(e["samples_ms"])
    return out


# --- the cachefile ---------------------------------------------------------------------------------------------

def read_table(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def cache_entries(space, rows, costs, timestamp):
    """key -> entry for every configuration of the space; raises if the table lacks one or has an unknown one."""
    by_key = {}
    for r in rows:
        missing = [d for d in space.dims if d not in r]
        if missing:
            raise ValueError(f"the table has no column for {', '.join(missing)}")
        config = {d: int(r[d]) for d in space.dims}
        by_key[",".join(str(config[d]) for d in space.dims)] = (int(r.get("index", len(by_key))), r)
    entries = {}
    for c in space.configs:
        dkey = ",".join(str(c[d]) for d in space.dims)
        if dkey not in by_key:
            raise ValueError(f"the table lacks the configuration {dkey} ({', '.join(space.dims)}): a simulation needs "
                             "every configuration of the space")
        index, r = by_key.pop(dkey)
        cost = costs.get(index, {})
        e = dict(c)
        status = r.get("status", "")
        ms = float(r["median_ms"]) if status == "ok" and r.get("median_ms") else None
        if ms is not None:
            e["time"] = ms
            e["times"] = cost.get("samples_ms") or [ms]
        else:
            e["__error__"] = ERROR_OF_STATUS.get(status, "RuntimeFailedConfig")
        e["compile_time"] = cost.get("compile_ms", 0.0)
        e["verification_time"] = 0
        e["benchmark_time"] = cost.get("measure_ms", 0.0) if status != "compile_failed" else 0
        e["strategy_time"] = 0
        e["framework_time"] = 0
        e["timestamp"] = timestamp
        entries[space.key(c)] = e
    if by_key:
        extra = next(iter(by_key))
        raise ValueError(f"the table has {len(by_key)} configuration(s) outside the kernel's space, e.g. {extra}")
    return entries


def cache_text(header, entries):
    """The file exactly as Kernel Tuner writes it: the header dumped with indent="" minus its closing `}\\n}`, one
    `\\n"key": {...},` line per configuration (store_cache), then the last comma replaced by `}\\n}` (close_cache)."""
    h = dict(header)
    h["cache"] = {}
    text = json.dumps(h, indent="")[:-3]
    for key, e in entries.items():
        text += "\n" + json.dumps({key: e})[1:-1] + ","
    return text[:-1] + "}\n}" if text.endswith(",") else text + "}\n}"


def make_cache(table, kernel, kernel_name, problem_size, derive=None, sweep=None, report=None, device_name=None):
    """Returns (cache text, summary dict)."""
    rows = read_table(table)
    space = KtSpace(open(kernel).read(), derive)
    n = len(rows)
    gpu, date = (read_report_meta(report) if report else (None, None))
    if sweep and os.path.exists(os.path.join(sweep, "report.txt")):
        gpu2, date2 = read_report_meta(os.path.join(sweep, "report.txt"))
        gpu, date = gpu or gpu2, date or date2
    if sweep:
        costs = sweep_costs(sweep, n)
        source = f"per configuration, from {sweep}"
        have = sum(1 for c in costs.values() if "compile_ms" in c)
        if have < n:
            print(f"kt_cache: {n - have} configuration(s) without a compile time in {sweep}/compiled (0 used)", file=sys.stderr)
        if not any("measure_ms" in c for c in costs.values()):
            rep = report or os.path.join(sweep, "report.txt")
            if os.path.exists(rep):
                _, _, measure_s, _ = read_report_stages(rep)
                for c in costs.values():
                    c["measure_ms"] = 1000 * measure_s / n
                source += f"; measurement spread evenly from {rep} (no costs.csv)"
    elif report:
        compile_s, _, measure_s, jobs = read_report_stages(report)
        costs = {i: {"compile_ms": 1000 * compile_s * jobs / n, "measure_ms": 1000 * measure_s / n} for i in range(n)}
        source = f"stage times spread evenly, from {report} (compile {compile_s:g} s x {jobs} jobs, measurement {measure_s:g} s)"
    else:
        costs = {}
        source = "none (compile_time = benchmark_time = 0: simulated time counts only the strategy)"
    device = device_name or gpu or "unknown GPU"
    ts = str(datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)) if date else str(datetime.now(timezone.utc))
    entries = cache_entries(space, rows, costs, ts)
    header = {"device_name": device, "kernel_name": kernel_name, "problem_size": list(problem_size),
              "tune_params_keys": list(space.tune_params), "tune_params": space.tune_params, "objective": ["time"]}
    summary = {"configurations": len(entries), "ok": sum(1 for e in entries.values() if "__error__" not in e),
               "device_name": device, "tune_params_keys": list(space.tune_params), "restrictions": space.restrictions,
               "costs": source}
    return cache_text(header, entries), summary


def parse_derive(items):
    out = {}
    for it in items or []:
        name, eq, expr = it.partition("=")
        if not eq or not name.strip() or not expr.strip():
            raise SystemExit(f"kt_cache: --derive {it!r}: expected NAME=EXPR")
        out[name.strip()] = expr.strip()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the module docstring (head -40 scripts/perf/kt_cache.py) for the format.")
    ap.add_argument("measurements", help="measurements.csv of scripts/perf/search_efficiency.sh")
    ap.add_argument("--kernel", required=True, help="the measured kernel (kernel_subspace.cu of the sweep)")
    ap.add_argument("--kernel-name", required=True, help="the __global__ function Kernel Tuner tunes")
    ap.add_argument("--problem-size", required=True, help="Kernel Tuner's problem_size, comma-separated (e.g. 4096,4096)")
    ap.add_argument("--derive", action="append", metavar="NAME=EXPR", help="a derived tune parameter (repeatable)")
    ap.add_argument("--sweep", help="the sweep directory (compiled/, costs.csv, runs/, report.txt)")
    ap.add_argument("--report", help="report.txt of an older sweep: its stage times, spread evenly, as costs")
    ap.add_argument("--device-name", help="Kernel Tuner's device_name (default: the report's gpu)")
    ap.add_argument("--out", required=True, help="the cachefile to write (.json)")
    a = ap.parse_args(argv)
    try:
        problem_size = [int(x) for x in a.problem_size.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"kt_cache: --problem-size {a.problem_size!r}: expected integers, comma-separated")
    for p in [a.measurements, a.kernel] + [x for x in (a.sweep, a.report) if x]:
        if not os.path.exists(p):
            raise SystemExit(f"kt_cache: no such file or directory: {p}")
    try:
        text, summary = make_cache(a.measurements, a.kernel, a.kernel_name, problem_size, parse_derive(a.derive),
                                   a.sweep, a.report, a.device_name)
    except ValueError as e:
        raise SystemExit(f"kt_cache: {e}")
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    print(f"kt_cache: {summary['configurations']} configurations ({summary['ok']} ok) -> {a.out}")
    print(f"kt_cache: tune_params {', '.join(summary['tune_params_keys'])}; device {summary['device_name']}")
    print(f"kt_cache: restrictions {summary['restrictions']}")
    print(f"kt_cache: costs {summary['costs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
