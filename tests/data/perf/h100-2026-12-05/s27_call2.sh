#!/usr/bin/env bash
# Session 27, call 2 (issue 35): session 26's call showed the fork server refusing every preload ("not serving: 16
# thread(s) started by the preload"), so each Triton child imported Liger-Kernel again (kernel_import 6.4 s of a 9.3 s
# child; a candidate about 30 s over three cases), and the Triton sweep's chunks timed by different methods
# (liger_rms_norm's project point 0.065 ms in the sweep against kopt's 0.049). After this session's changes (the
# server preloads with TORCH_WARM_POOL=0 and names any thread a preload starts; the sweep times a fallen-back chunk
# one configuration a run and its finalists together): 1. which threads Liger's import starts, with and without
# TORCH_WARM_POOL=0; 2. corpus-bench on liger_rms_norm, liger_layer_norm, fla_softmax, liger_geglu; 3. the fork
# servers' logs. One tgz in $OUT.
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
echo "=== 1. threads of Liger's import [$(( $(date +%s) - T0 ))s]"
for pool in unset 0; do
  ( [ "$pool" = 0 ] && export TORCH_WARM_POOL=0; PYTHONPATH=$PWD/python timeout 60 python3 - <<'PY'
import importlib.util, os, time
import numpy, torch, triton, triton.language  # the fork server's default imports
from kopt_harness import preload
before = preload.threads()
t0 = time.monotonic()
spec = importlib.util.spec_from_file_location("k", "examples/corpus/liger_rms_norm/kernel.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
time.sleep(0.5)
print(f"TORCH_WARM_POOL={os.environ.get('TORCH_WARM_POOL')}: import {time.monotonic() - t0:.2f} s; "
      f"{preload.fork_safety(before) or 'no new thread'}")
PY
  ) 2>&1 | tail -3
done | tee "$OUT/keep/threads.txt"
echo "=== 2. corpus-bench [$(( $(date +%s) - T0 ))s]"
CB_CASES=off CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=120 CB_DEADLINE_S=$(( 470 - ($(date +%s) - T0) )) \
  bash scripts/device/check.sh corpus-bench liger_rms_norm liger_layer_norm fla_softmax liger_geglu 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion" | cut -c1-400 | tail -40
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
echo "=== 3. the fork servers' logs, the candidates' phases [$(( $(date +%s) - T0 ))s]"
for f in "${TMPDIR:-/tmp}"/kopt-forkserver-*/*.log; do echo "== $f"; tail -5 "$f"; done >"$OUT/keep/forkserver_logs.txt" 2>&1
grep -h "preloaded\|not serving" "$OUT/keep/forkserver_logs.txt" | cut -c1-300 | head
find runs/cb -path '*/opt/*' -name run.json | head -300 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
find runs/cb -path '*/sweep/*' -name 'run_*.json' | head -300 | tar czf "$OUT/keep/sweep_runs.tgz" -T - 2>/dev/null
python3 - runs/cb <<'PY' | tee "$OUT/keep/triton_phases.txt"
import glob, json, statistics, sys
for k in sorted(glob.glob(sys.argv[1] + "/*/opt")):
    per = {}
    for f in glob.glob(k + "/**/run.json", recursive=True):
        try: ph = json.load(open(f)).get("phases_ms") or {}
        except Exception: continue
        for n, v in ph.items():
            if isinstance(v, (int, float)): per.setdefault(n, []).append(v)
    print(k.split("/")[-2], " ".join(f"{n} {statistics.median(v):.0f}" for n, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1]))[:5]), f"n={len(per.get('total', []))}")
PY
tar czf "$OUT/s27_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
