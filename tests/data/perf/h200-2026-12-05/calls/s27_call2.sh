#!/usr/bin/env bash
# Session 27, call 2 (issues 36, 38, 35), on the H200 the device offered: 
#   1. check.sh time-to-result optimize: vector_add 2^24 cold (the fresh machine), then warm (nothing on an H200 since
#      12-04); 2. issue 38: the GPU suite's tests (scripts/gpu_suite.sh) but optimize vector_add (step 1 is it), one
#      optimize per backend first; 3. issue 35: which threads Liger-Kernel's import starts, with and without
#      TORCH_WARM_POOL=0 (session 26's call: the fork server refused every preload, "16 thread(s) started by the
#      preload"); 4. kopt optimize liger_rms_norm 4096 x 4096 (--time-budget 30) in the time left, then its
#      candidates' phases and the fork servers' logs: does the preload now serve.
# Everything packed into ONE file in $OUT. Carry: .carry/build/kopt, .carry/build/COMMIT, .carry/cutlass.tgz,
# examples/corpus/_fetched, this script as .carry/call.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
left() { echo $(( ${1:-555} - ($(date +%s) - T0) )); }
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
export KOPT_DATA_DIR=$PWD/data
keep_run() {  # keep_run RUNS_DIR NAME: state.json and summary.json of the run
  local d; d=$(ls -d "$1"/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  mkdir -p "$OUT/keep/$2"; cp "$d"/state.json "$d"/summary.json "$d"/summary.md "$OUT/keep/$2/" 2>/dev/null
  cp "$d"/*.log "$OUT/keep/$2/" 2>/dev/null
}
echo "=== 1. time-to-result optimize (cold, then warm) [$(( $(date +%s) - T0 )) s]"
TTR_OPT_LIMIT_S=110 timeout 200 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "^phases|^history|^reuse|rc=|===|wall" | cut -c1-600
cp "$OUT"/*.log "$OUT/keep/" 2>/dev/null
keep_run runs/ttr_opt1 cold; keep_run runs/ttr_opt2 warm
echo "=== 2. the GPU suite [$(( $(date +%s) - T0 )) s]"
export CUTLASS_PATH=$PWD/.carry/cutlass
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
while read -r t e; do
  l=$(left 420)
  if [ "$l" -lt 15 ]; then echo "suite $t $e: not started ($l s left of the suite's share)"; continue; fi
  t1=$(date +%s)
  KOPT_GPU_SUITE_DIR=$PWD/runs/suite timeout -k 5 "$l" bash scripts/gpu_suite.sh "$t" "$e" </dev/null >"$OUT/keep/suite_${t}_$e.log" 2>&1
  printf 'suite %-26s exit %3d %5d s\n' "$t $e" "$?" "$(( $(date +%s) - t1 ))"
done <<'LIST'
optimize triton_softmax
optimize cutlass_gemm
optimize sgemm_tunable
bench triton_softmax
bench cutlass_gemm
profile triton_softmax
sass triton_softmax
sass cutlass_gemm
bench vector_add
bench sgemm_tunable
bench-tuned sgemm_tunable
bench softmax
bench reduction
bench transpose
sass vector_add
sass sgemm_tunable
roofline vector_add
roofline sgemm_tunable
profile vector_add
profile sgemm_tunable
profile cutlass_gemm
LIST
echo "=== 3. threads of Liger's import [$(( $(date +%s) - T0 )) s]"
for pool in unset 0; do
  ( [ "$pool" = 0 ] && export TORCH_WARM_POOL=0; PYTHONPATH=$PWD/python timeout 40 python3 - <<'PY'
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
echo "=== 4. optimize liger_rms_norm [$(( $(date +%s) - T0 )) s]"
l=$(left 548)
if [ "$l" -ge 60 ]; then
  timeout -s INT "$l" .carry/build/kopt optimize examples/corpus/liger_rms_norm/kernel.py --ref examples/corpus/liger_rms_norm/ref.py \
    --n_rows=4096 --n_cols=4096 --time-budget 30 --out-dir runs/liger >"$OUT/keep/liger_rms_norm.log" 2>&1
  echo "optimize liger_rms_norm rc=$? $(( $(date +%s) - T0 )) s"
  grep -E "^    i[0-9]|candidates measured:.*in|gates passed|stopped|wall" "$OUT/keep/liger_rms_norm.log" | cut -c1-200 | tail -20
  keep_run runs/liger liger
  find runs/liger -name run.json | tar czf "$OUT/keep/liger_runs.tgz" -T - 2>/dev/null
else
  echo "optimize liger_rms_norm: not started ($l s left)"
fi
for f in "${TMPDIR:-/tmp}"/kopt-forkserver-*/*.log; do echo "== $f"; tail -5 "$f"; done >"$OUT/keep/forkserver_logs.txt" 2>&1
grep -h "preloaded\|not serving" "$OUT/keep/forkserver_logs.txt" | cut -c1-300 | head
tar czf "$OUT/s27_call2.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
