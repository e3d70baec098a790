#!/usr/bin/env bash
# Session 27, call 3 (issues 35, 38), after call 2 named the threads Liger-Kernel's import starts (OpenMP's pool, 15
# threads named python3, and jemalloc's background thread; TORCH_WARM_POOL made no difference): the fork server now
# sets OMP_NUM_THREADS=1 before its first import when it has a preload file, and lets jemalloc's thread be.
#   1. the same thread count with OMP_NUM_THREADS=1 set before torch's import, as the server does;
#   2. the GPU suite's test call 2 had no time for (profile cutlass_gemm);
#   3. corpus-bench liger_rms_norm (CB_CASES=off, --time-budget 40 under its 160 s cap, kopt bench, the sweep, which
#      now times a fallen-back chunk one configuration a run and its finalists together), then the fork servers'
#      logs and the candidates' phases: does the preload serve, what a child costs with it.
# One tgz in $OUT. Carry: .carry/build/kopt, .carry/build/COMMIT, .carry/cutlass.tgz, examples/corpus/_fetched, this
# script as .carry/call.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
echo "=== 1. threads of Liger's import, OMP_NUM_THREADS=1 [$(( $(date +%s) - T0 ))s]"
OMP_NUM_THREADS=1 TORCH_WARM_POOL=0 PYTHONPATH=$PWD/python timeout 40 python3 - <<'PY' 2>&1 | tail -3 | tee "$OUT/keep/threads.txt"
import importlib.util, os, time
import numpy, torch, triton, triton.language  # the fork server's default imports
from kopt_harness import preload
before = preload.threads()
t0 = time.monotonic()
spec = importlib.util.spec_from_file_location("k", "examples/corpus/liger_rms_norm/kernel.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
time.sleep(0.5)
print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}: import {time.monotonic() - t0:.2f} s; "
      f"{preload.fork_safety(before) or 'no new thread'}; torch threads {torch.get_num_threads()}")
PY
echo "=== 2. suite profile cutlass_gemm [$(( $(date +%s) - T0 ))s]"
export CUTLASS_PATH=$PWD/.carry/cutlass
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
t1=$(date +%s)
KOPT_GPU_SUITE_DIR=$PWD/runs/suite timeout -k 5 70 bash scripts/gpu_suite.sh profile cutlass_gemm </dev/null >"$OUT/keep/suite_profile_cutlass_gemm.log" 2>&1
printf 'suite %-26s exit %3d %5d s\n' "profile cutlass_gemm" "$?" "$(( $(date +%s) - t1 ))"
echo "=== 3. corpus-bench liger_rms_norm [$(( $(date +%s) - T0 ))s]"
CB_CASES=off CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=100 CB_DEADLINE_S=$(( 375 - ($(date +%s) - T0) )) \
  bash scripts/device/check.sh corpus-bench liger_rms_norm 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion" | cut -c1-400 | tail -20
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
for f in "${TMPDIR:-/tmp}"/kopt-forkserver-*/*.log; do echo "== $f"; tail -5 "$f"; done >"$OUT/keep/forkserver_logs.txt" 2>&1
grep -h "preloaded\|not serving" "$OUT/keep/forkserver_logs.txt" | cut -c1-300 | head
find runs/cb -path '*/opt/*' -name run.json | head -300 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
python3 - runs/cb <<'PY' | tee "$OUT/keep/triton_phases.txt"
import glob, json, statistics, sys
for k in sorted(glob.glob(sys.argv[1] + "/*/opt")):
    per = {}
    for f in glob.glob(k + "/**/run.json", recursive=True):
        try: ph = json.load(open(f)).get("phases_ms") or {}
        except Exception: continue
        for n, v in ph.items():
            if isinstance(v, (int, float)): per.setdefault(n, []).append(v)
    print(k.split("/")[-2], " ".join(f"{n} {statistics.median(v):.0f}" for n, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1]))[:6]), f"n={len(per.get('total', []))}")
PY
tar czf "$OUT/s27_call3.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
