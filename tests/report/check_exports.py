#!/usr/bin/env python3
"""Checks kopt's interop commands on a recorded run directory, from the outside, with the tools others use.

- `kopt export RUN --format t4` validates against Kernel Tuner's published T4 results schema (JSON Schema
  draft 2020-12, python `jsonschema`), with one result per measured candidate;
- `kopt export RUN --format csv --out FILE` reads back with python's csv module: one row per measured candidate,
  every parameter a column, the medians those of the run's own files;
- `kopt compare RUN RUN --json -`: a run against itself gives ratio 1 with a CI of [1, 1] on every row;
- wrong input: an unknown format and a missing run directory exit 4 with a message naming what to fix.

Exit status: 0 passed, 1 failed. Usage: check_exports.py --kopt build/kopt --run DIR --schema results-schema.json
"""
import argparse
import csv
import io
import json
import pathlib
import subprocess
import sys
import tempfile

import jsonschema


def kopt(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kopt", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--schema", required=True)
    a = ap.parse_args()
    run = pathlib.Path(a.run)
    failures = []
    state = json.loads((run / "state.json").read_text())
    history = state["history"]
    ablations = list(run.glob("iter_*/ablation/candidates/*"))
    measured = len(history) + len(ablations)

    # ---- T4 ----
    r = kopt(a.kopt, "export", str(run), "--format", "t4")
    if r.returncode != 0:
        failures.append(f"export t4 exited {r.returncode}: {r.stderr}")
    else:
        t4 = json.loads(r.stdout)
        schema = json.loads(pathlib.Path(a.schema).read_text())
        validator = jsonschema.Draft202012Validator(schema)
        errors = list(validator.iter_errors(t4))
        failures += [f"T4 schema: {e.message} at {list(e.absolute_path)}" for e in errors]
        if len(t4.get("results", [])) != measured:
            failures.append(f"T4: {len(t4.get('results', []))} results, expected {measured}")
        ok = [x for x in t4["results"] if x["invalidity"] == "correct"]
        if len(ok) < 2 or any(not x["times"]["runtimes"] for x in ok):
            failures.append("T4: correct results without their runtimes")
        # The schema leaves much open; what a T4 consumer relies on is there too.
        for x in t4["results"]:
            if not isinstance(x["configuration"].get("BM"), int):
                failures.append(f"T4: configuration without the BM parameter: {x['configuration']}")
                break

    # ---- CSV ----
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "run.csv"
        r = kopt(a.kopt, "export", str(run), "--format", "csv", "--out", str(out))
        if r.returncode != 0 or r.stdout:
            failures.append(f"export csv --out exited {r.returncode} (stdout: {r.stdout!r}): {r.stderr}")
        else:
            rows = list(csv.DictReader(io.StringIO(out.read_text(), newline="")))
            if len(rows) != measured:
                failures.append(f"CSV: {len(rows)} rows, expected {measured}")
            by_id = {row["id"]: row for row in rows}
            for h in history:
                row = by_id.get(h["candidate"]["id"])
                if row is None:
                    failures.append(f"CSV: no row for {h['candidate']['id']}")
                    continue
                if row["status"] != h["status"]:
                    failures.append(f"CSV: {row['id']} status {row['status']}, state.json says {h['status']}")
                if h["median_ms"] is not None and abs(float(row["median_ms"]) - h["median_ms"]) > 1e-5 * h["median_ms"]:
                    failures.append(f"CSV: {row['id']} median {row['median_ms']}, state.json says {h['median_ms']}")
                for p, v in h["candidate"]["params"].items():
                    if row.get(p) != str(v):
                        failures.append(f"CSV: {row['id']} {p}={row.get(p)}, expected {v}")

    # ---- compare ----
    r = kopt(a.kopt, "compare", str(run), str(run), "--json", "-")
    if r.returncode != 0:
        failures.append(f"compare exited {r.returncode}: {r.stderr}")
    else:
        cmp = json.loads(r.stdout)
        if cmp["meta"]["kind"] != "compare" or len(cmp["rows"]) < 3:
            failures.append(f"compare: {len(cmp['rows'])} rows")
        for row in cmp["rows"]:
            q = row["ratio"]
            if not q or abs(q["median_ratio"] - 1) > 1e-12 or q["ci95_low"] != q["ci95_high"] or q["verdict"] != "same":
                failures.append(f"compare of a run with itself: {row}")

    # ---- wrong input ----
    r = kopt(a.kopt, "export", str(run), "--format", "xlsx")
    if r.returncode != 4 or "--format must be t4 or csv" not in r.stderr:
        failures.append(f"export --format xlsx: exit {r.returncode}, {r.stderr!r}")
    r = kopt(a.kopt, "compare", str(run), str(run / "nope"))
    if r.returncode != 4 or "is not a directory" not in r.stderr:
        failures.append(f"compare with a missing run: exit {r.returncode}, {r.stderr!r}")

    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        return 1
    print(f"passed: T4 valid against the schema with {measured} results; CSV {measured} rows; compare consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
