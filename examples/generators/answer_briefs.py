#!/usr/bin/env python3
"""Answers `kopt optimize --generator manual` the way a person would, for tests and the device check.

`--generator manual` writes each iteration's brief into the run directory and waits for a manifest.json there.
This script watches a folder of runs (kopt optimize --out-dir FOLDER), and for every iteration directory whose
brief.json has no manifest.json yet, runs prepared_variants.py there (KOPT_BRIEF set, the iteration directory
as working directory) with the variants listed for that iteration: VARIANTS_DIR/iteration_<n>.json, else
VARIANTS_DIR/variants.json. It stops when every run in the folder has a summary.json, or after --max-seconds.

    python3 examples/generators/answer_briefs.py --runs runs/manual --variants examples/generators/sgemm_rewrites &
    kopt optimize kernel.cu --ref ref.py --M=2048 ... --generator manual --out-dir runs/manual

Python 3 standard library only.
"""
import argparse
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def variants_for(variants_dir, iteration):
    for name in ("iteration_%d.json" % iteration, "variants.json"):
        path = os.path.join(variants_dir, name)
        if os.path.exists(path):
            return path
    return None


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", required=True, help="the folder kopt optimize --out-dir writes its runs into")
    p.add_argument("--variants", required=True, help="a folder of iteration_<n>.json (or variants.json) lists")
    p.add_argument("--max-seconds", type=float, default=600)
    p.add_argument("--poll-seconds", type=float, default=0.5)
    a = p.parse_args(argv)
    start = time.time()
    answered = set()
    while time.time() - start < a.max_seconds:
        runs = glob.glob(os.path.join(a.runs, "**", "run_*"), recursive=True)
        for brief in sorted(glob.glob(os.path.join(a.runs, "**", "iter_*", "brief.json"), recursive=True)):
            it_dir = os.path.dirname(brief)
            key = (it_dir, os.path.getmtime(brief))
            if key in answered or os.path.exists(os.path.join(it_dir, "manifest.json")):
                continue
            iteration = int(os.path.basename(it_dir).split("_")[1])
            listing = variants_for(a.variants, iteration)
            if listing is None:
                print("answer_briefs: no variants for iteration %d in %s" % (iteration, a.variants), file=sys.stderr)
                answered.add(key)
                continue
            env = dict(os.environ, KOPT_BRIEF=os.path.abspath(brief))
            r = subprocess.run([sys.executable, os.path.join(HERE, "prepared_variants.py"), "--variants", os.path.abspath(listing)],
                               cwd=it_dir, env=env, capture_output=True, text=True)
            print("answer_briefs: %s (iteration %d, %s): exit %d\n%s%s" % (it_dir, iteration, os.path.basename(listing),
                                                                          r.returncode, r.stdout, r.stderr), flush=True)
            answered.add(key)
        if runs and all(os.path.exists(os.path.join(r, "summary.json")) for r in runs):
            return 0
        time.sleep(a.poll_seconds)
    print("answer_briefs: stopped after %.0f s" % a.max_seconds, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
