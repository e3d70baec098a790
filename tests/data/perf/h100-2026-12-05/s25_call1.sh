#!/usr/bin/env bash
# Session 25, call 1 (issue 36): the defaults session 24 built on the CPU (no baseline profile after the search,
# gate 2's check beside the cases' golden data, the sanitizer's verdicts and the held-out runs kept across runs),
# whole wall on vector_add 2^24, every stderr line stamped:
#   1-2. check.sh time-to-result optimize: cold (the fresh machine), then warm (its caches and database);
#   3.   the warm run again with KOPT_EVIDENCE_CACHE=off (what the evidence cache saves);
#   4-5. on the same card, each over a fresh KOPT_CACHE_DIR (kopt's caches cold, the machine's warm): the previous
#        defaults (--baseline-profile after, KOPT_EVIDENCE_CACHE=off), then the new defaults; the pair is the
#        same-card comparison where this card is not the H200 of s22's figures;
#   6.   issue 38: the GPU suite's tests (scripts/gpu_suite.sh), one optimize per backend first, as many as the call's
#        555 s leave time for (each under the time left; a test not started is listed as such).
# Everything packed into ONE file in $OUT. Carry: .carry/build/kopt, .carry/build/COMMIT, .carry/cutlass.tgz, this
# script as .carry/call1.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
stamped() {  # stamped LOG LIMIT CMD...: the command's output, each line with the seconds since it started
  local log=$1 lim=$2; shift 2
  timeout -s INT "$lim" "$@" 2>&1 | python3 -u -c 'import sys,time
t=time.time()
for l in sys.stdin: sys.stdout.write("%7.2f %s" % (time.time()-t, l))' >"$OUT/keep/$log"
  tail -1 "$OUT/keep/$log"
}
keep_run() {  # keep_run RUNS_DIR NAME: state.json and summary.json of the run
  local d; d=$(ls -d "$1"/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  mkdir -p "$OUT/keep/$2"; cp "$d"/state.json "$d"/summary.json "$d"/summary.md "$OUT/keep/$2/" 2>/dev/null
}
echo "=== 1-2. time-to-result optimize (cold, then warm) [$(( $(date +%s) - T0 )) s]"
timeout 330 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "^phases|^history|^reuse|rc=|===" | cut -c1-600
keep_run runs/ttr_opt1 cold; keep_run runs/ttr_opt2 warm
echo "=== 3. warm, KOPT_EVIDENCE_CACHE=off [$(( $(date +%s) - T0 )) s]"
KOPT_EVIDENCE_CACHE=off stamped warm_evidence_off.log 100 .carry/build/kopt optimize $VA --out-dir runs/ttr_eoff
keep_run runs/ttr_eoff warm_evidence_off
echo "=== 4. previous defaults, fresh kopt caches [$(( $(date +%s) - T0 )) s]"
KOPT_CACHE_DIR=$PWD/runs/cache_prev KOPT_EVIDENCE_CACHE=off stamped prev_defaults.log 150 \
  .carry/build/kopt optimize $VA --baseline-profile after --out-dir runs/ttr_prev
keep_run runs/ttr_prev prev_defaults
echo "=== 5. new defaults, fresh kopt caches [$(( $(date +%s) - T0 )) s]"
KOPT_CACHE_DIR=$PWD/runs/cache_new stamped new_defaults.log 130 .carry/build/kopt optimize $VA --out-dir runs/ttr_new
keep_run runs/ttr_new new_defaults
for f in "$OUT"/keep/*/state.json; do python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[1].split("/")[-2], "stop", d.get("stop_reason"), "measurements", len(d.get("history", [])),
      "champion", ((d.get("champion") or {}).get("candidate") or {}).get("params"),
      "phases", json.dumps(d.get("phase_seconds")))
PY
done
echo "=== 6. the GPU suite [$(( $(date +%s) - T0 )) s]"
export CUTLASS_PATH=$PWD/.carry/cutlass
[ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
while read -r t e; do
  left=$((555 - ($(date +%s) - T0)))
  if [ "$left" -lt 20 ]; then echo "suite $t $e: not started ($left s left)"; continue; fi
  t1=$(date +%s)
  KOPT_GPU_SUITE_DIR=$PWD/runs/suite timeout -k 5 "$left" bash scripts/gpu_suite.sh "$t" "$e" </dev/null >"$OUT/keep/suite_${t}_$e.log" 2>&1
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
mv "$OUT"/*.log "$OUT"/*.tgz "$OUT/keep/" 2>/dev/null
tar czf "$OUT/s25_call1.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
