#!/usr/bin/env python3
"""Reads a `kopt export --format t4` file the way Kernel Tuner does, on the machine where kernel-tuner is
installed (the H200; scripts/device/report_check.sh).

Kernel Tuner's T4 reader is its schema plus jsonschema: kernel_tuner.file_utils.output_file_schema("results")
returns the version and schema it writes and validates against (its test_store_output_file). This checks the file
against the schema inside the installed kernel_tuner (not kopt's copy), that the version matches, and that each
result has what kernel_tuner.file_utils.get_t4_results writes (configuration, times with runtimes, invalidity,
correctness, measurements, objectives), with the same configuration keys in every result.
Usage: python3 scripts/device/t4_check.py T4.json        (exit 0: loads; 1: does not, with the reason)
"""
import json
import sys
from importlib.metadata import PackageNotFoundError, version

import jsonschema
from kernel_tuner.file_utils import output_file_schema


def main():
    data = json.load(open(sys.argv[1]))
    schema_version, schema = output_file_schema("results")
    jsonschema.validate(data, schema)
    problems = []
    if data.get("schema_version") != schema_version:
        problems.append(f"schema_version {data.get('schema_version')} but kernel_tuner writes {schema_version}")
    results = data.get("results", [])
    keys = None
    for r in results:
        for k in ("configuration", "times", "invalidity", "correctness", "measurements", "objectives"):
            if k not in r:
                problems.append(f"a result lacks {k}: {r.get('kopt', {}).get('id')}")
        if "runtimes" not in r.get("times", {}):
            problems.append(f"times without runtimes: {r.get('kopt', {}).get('id')}")
        if keys is None:
            keys = set(r["configuration"])
        elif set(r["configuration"]) != keys:
            problems.append(f"configuration keys differ: {sorted(keys)} vs {sorted(r['configuration'])}")
    correct = [r for r in results if r["invalidity"] == "correct"]
    times = [m["value"] for r in correct for m in r["measurements"] if m["name"] == "time"]
    try:
        kt = version("kernel_tuner")
    except PackageNotFoundError:
        kt = version("kernel-tuner")
    print(f"kernel_tuner {kt}: T4 {schema_version}; {len(results)} results, {len(correct)} correct; "
          f"best time {min(times) if times else 'n/a'} ms; tunable parameters {sorted(keys or [])}")
    for p in problems:
        print("PROBLEM: " + p)
    return 1 if problems or not correct else 0


if __name__ == "__main__":
    sys.exit(main())
