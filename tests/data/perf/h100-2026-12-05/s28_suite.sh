#!/usr/bin/env bash
# Session 28 (issues 38, 36): the whole GPU suite on an H200 at the carried commit, resumable over calls on one warm
# machine (runs/ survives between calls there): 1. `check.sh time-to-result optimize` (vector_add 2^24: cold on the
# fresh machine, then warm), first verification on a GPU of session 27's golden-data writer thread (47f5fb7,
# c59011c), the baseline sanitizer beside the cases' golden data (6e2b17c) and the reuse summary (6a29e9a); 2. every
# test of scripts/gpu_suite.sh (`list`), profile cutlass_gemm (never run on an H200) first, each test once:
# runs/s28_suite_done.txt holds those finished, so a second call goes on where the first stopped.
# Run: CALL=NAME SHARE_S=N bash .carry/call.sh. Everything packed into $OUT/NAME.tgz.
# Carry: .carry/build/kopt, .carry/build/COMMIT, .carry/cutlass.tgz, this script as .carry/call.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
CALL=${CALL:-s28_call}
T0=$(date +%s)
left() { echo $(( ${SHARE_S:-540} - ($(date +%s) - T0) )); }
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep" runs
export KOPT_DATA_DIR=$PWD/data
DONE=runs/s28_suite_done.txt
touch "$DONE"
keep_run() {  # keep_run RUNS_DIR NAME: state.json and summary.json of the run
  local d; d=$(ls -d "$1"/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  mkdir -p "$OUT/keep/$2"; cp "$d"/state.json "$d"/summary.json "$d"/summary.md "$OUT/keep/$2/" 2>/dev/null
  cp "$d"/*.log "$OUT/keep/$2/" 2>/dev/null
}
if ! grep -qx "time-to-result" "$DONE"; then
  echo "=== 1. time-to-result optimize (cold, then warm) [$(( $(date +%s) - T0 )) s]"
  TTR_OPT_LIMIT_S=110 timeout 240 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "^phases|^history|^reuse|rc=|===|wall" | cut -c1-700
  cp "$OUT"/*.log "$OUT/keep/" 2>/dev/null
  keep_run runs/ttr_opt1 cold; keep_run runs/ttr_opt2 warm
  echo "time-to-result" >>"$DONE"
fi
echo "=== 2. the GPU suite [$(( $(date +%s) - T0 )) s]"
export CUTLASS_PATH=$PWD/.carry/cutlass
[ -d .carry/cutlass ] || { [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry; }
{ echo "profile cutlass_gemm"; echo "optimize vector_add"; bash scripts/gpu_suite.sh list; } | awk '!seen[$0]++' >runs/s28_list.txt
while read -r t e; do
  grep -qx "$t $e" "$DONE" && continue
  l=$(left)
  if [ "$l" -lt 60 ]; then echo "suite $t $e: not started ($l s left of the call's share)"; continue; fi
  t1=$(date +%s)
  KOPT_GPU_SUITE_DIR=$PWD/runs/suite timeout -k 5 "$l" bash scripts/gpu_suite.sh "$t" "$e" </dev/null >"$OUT/keep/suite_${t}_$e.log" 2>&1
  rc=$?
  printf 'suite %-26s exit %3d %5d s\n' "$t $e" "$rc" "$(( $(date +%s) - t1 ))" | tee -a runs/s28_suite_table.txt
  [ "$rc" = 124 ] || [ "$rc" = 137 ] || echo "$t $e" >>"$DONE"
done <runs/s28_list.txt
echo "=== the suite so far (every call)"; cat runs/s28_suite_table.txt
echo "$(wc -l <runs/s28_list.txt) tests listed, $(grep -vcx time-to-result "$DONE") finished"
tar czf "$OUT/keep/suite_runs.tgz" --exclude='*.so' --exclude='*.ncu-rep' --exclude='*.safetensors' --exclude='*.bin' \
  --exclude='*.cubin' --exclude='build' runs/suite 2>/dev/null
tar czf "$OUT/$CALL.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
