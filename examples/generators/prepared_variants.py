#!/usr/bin/env python3
"""A deterministic kopt generator: copies prepared kernel variants into the iteration directory.

kopt runs a generator command in the iteration directory with KOPT_BRIEF set to brief.json; the
generator writes its candidate sources there and lists them in manifest.json. This one does no code
generation at all, which makes it the reference for the protocol and a template for coding agents
(docs/GENERATORS.md): read the brief, write sources under the current directory, write the manifest last.

    kopt optimize kernel.cu --ref ref.py --generator \
        'python3 examples/generators/prepared_variants.py --variants my_variants/variants.json' ...

variants.json lists the prepared variants, each with the methods it implements (guarded by
#if KOPT_<ID>), optional -D params and optional extra nvcc flags; files are relative to variants.json:

    {"variants": [{"file": "vec4.cu", "methods": ["vectorized_access"], "params": {"THREADS": 256},
                   "flags": []}]}

Choice: variants implementing at least one of the brief's methods come first, then the others, each
group in file order; at most the brief's k. Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import sys


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def choose(variants, wanted_methods, k):
    """Variants that implement a wanted method first (stable), then the rest; at most k."""
    wanted = set(wanted_methods)
    hits = [v for v in variants if wanted & set(v.get("methods", []))]
    rest = [v for v in variants if not wanted & set(v.get("methods", []))]
    return (hits + rest)[:k]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", required=True, help="variants.json listing the prepared variants")
    parser.add_argument("--manifest", default="manifest.json", help="manifest file name (in the current directory)")
    args = parser.parse_args(argv)

    brief_path = os.environ.get("KOPT_BRIEF")
    if not brief_path:
        print("prepared_variants: KOPT_BRIEF is not set (kopt sets it to the iteration's brief.json)", file=sys.stderr)
        return 2
    brief = load_json(brief_path)
    k = int(brief["k"])
    wanted = [m["id"] for m in brief.get("methods", [])]
    out_dir = os.getcwd()

    listing = load_json(args.variants)
    base = os.path.dirname(os.path.abspath(args.variants))
    chosen = choose(listing["variants"], wanted, k)
    if not chosen:
        print("prepared_variants: no variants listed in " + args.variants, file=sys.stderr)
        return 3

    candidates = []
    for v in chosen:
        name = os.path.basename(v["file"])
        shutil.copyfile(os.path.join(base, v["file"]), os.path.join(out_dir, name))
        candidates.append({
            "file": name,
            "methods": v.get("methods", []),
            "params": v.get("params", {}),
            "flags": v.get("flags", []),
        })
        print("prepared_variants: %s implements %s" % (name, ", ".join(v.get("methods", [])) or "no method"))

    # The manifest goes last and atomically, so kopt never reads half of one.
    tmp = os.path.join(out_dir, args.manifest + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"candidates": candidates}, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(out_dir, args.manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
