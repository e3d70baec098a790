#!/usr/bin/env bash
# Session 41 call (c97b4c4, Triton candidates compiled ahead, on with KOPT_TRITON_PRECOMPILE=1; SG_SKIP skips the sgemm seeds and Kernel Tuner, THEN_CORPUS runs the corpus after the H200 part): on an H200, issue 36's figures with this build (vector_add cold twice then over its cache; kopt bench
# of a second candidate with the worker, and the hostile verdicts; sgemm_tunable seeds 1-5 cut at 47 s); on another GPU
# (or after the H200 part, with time left), issue 35's corpus benchmark with kopt's default flags (no --time-budget).
# CALL_MODE=ttr|corpus forces a part; CB_NAMES lists the corpus kernels in order.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-565}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" runs
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader; cat .carry/build/COMMIT; date -u
mode=${CALL_MODE:-}
[ -n "$mode" ] || case "$gpu" in *H200*) mode=ttr ;; *) mode=corpus ;; esac
echo "mode $mode"
if [ "$mode" = ttr ]; then
  rm -rf runs/ttr_* runs/bw_* runs/json runs/kt
  TTR_COLD_RUNS=2 timeout 150 bash scripts/device/check.sh time-to-result cold >"$OUT/ttr_cold.log" 2>&1; echo "cold rc=$? [$(( $(date +%s) - T0 )) s]"
  grep -E '^ttr_' "$OUT/ttr_cold.log"
  . scripts/device/lib.sh
  for c in ttr_cold1 ttr_cold2 ttr_cold_warm; do d=$(newest_run $c "*_*"); [ -n "$d" ] || continue
    cp "$d/golden_stream.log" "$OUT/${c}_golden_stream.log" 2>/dev/null
    (cd "$d" && find . \( -path './golden*' -o -path './build' \) -prune -o -type f \( -name '*.json' -o -name '*.log' \) -size -256k -print | tar czf "$OUT/${c}_rundir.tgz" -T - 2>/dev/null)
  done
  grep -h 'golden-batch' "$OUT"/ttr_cold1_golden_stream.log | head -12
  # kopt bench of a second candidate (the worker's part; the hostile verdicts after it run while time is left)
  timeout ${BW_S:-60} bash scripts/device/check.sh time-to-result bench-worker >"$OUT/ttr_bw.log" 2>&1; echo "bench-worker rc=$? [$(( $(date +%s) - T0 )) s]"
  grep -E '^(=== ttr_bw.*rc=|hostile verdicts)' "$OUT/ttr_bw.log" | head -30
  [ -n "${SG_SKIP:-}" ] || timeout $(( $(left) - 10 )) bash scripts/device/check.sh time-to-result sgemm-seeds >"$OUT/ttr_sg.log" 2>&1; echo "sgemm rc=$? [$(( $(date +%s) - T0 )) s]"
  grep -E '^ttr_' "$OUT/ttr_sg.log"
  if [ -z "${SG_SKIP:-}" ] && [ -d .whl ] && [ "$(left)" -gt 100 ]; then
    KT_FEVALS=30 KT_LIMIT_S=35 timeout $(( $(left) - 10 )) bash scripts/device/check.sh kt-live bayes_opt:1 bayes_opt:2 bayes_opt:3 bayes_opt:4 bayes_opt:5 >"$OUT/kt.log" 2>&1
    echo "kt rc=$? [$(( $(date +%s) - T0 )) s]"; grep -E '^(=== kt|kernel_tuner)|within|best' "$OUT/kt.log" | cut -c1-300 | head -30
  fi
fi
[ "$mode" = ttr ] && [ -n "${THEN_CORPUS:-}" ] && [ "$(left)" -gt 200 ] && mode=corpus
if [ "$mode" = corpus ]; then
  export CUTLASS_PATH=$PWD/.carry/cutlass
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  rm -rf runs/cb
  CB_TIME_BUDGET_S=none CB_STEPS="${CB_STEPS:-optimize sweep}" CB_OPT_LIMIT_S=${CB_OPT_LIMIT_S:-150} CB_DEADLINE_S=$(( $(left) - 25 )) CB_MIN_KERNEL_S=${CB_MIN_KERNEL_S:-150} \
    timeout $(( $(left) - 10 )) bash scripts/device/check.sh corpus-bench ${CB_NAMES:-flashinfer_rmsnorm flashinfer_gelu_tanh_and_mul cutlass_layernorm} >"$OUT/cb.log" 2>&1
  echo "corpus rc=$? [$(( $(date +%s) - T0 )) s]"
  # Each candidate's precompile and measuring results (first_call, phases): where a Triton candidate's seconds go.
  find runs/cb -path '*/candidates/*' \( -name run.json -o -name precompile.json \) -size -1M | tar czf "$OUT/candidates_json.tgz" -T - 2>/dev/null
  for f in $(find runs/cb -path '*/candidates/*' -name run.json | sort); do python3 -c "
import json,sys,os
r=json.load(open(sys.argv[1])); ph=r.get('phases_ms',{}); d=os.path.dirname(sys.argv[1])
p=json.load(open(d+'/precompile.json')) if os.path.exists(d+'/precompile.json') else {}
print(d.split('/cb/')[1][:80], r.get('status'), 'first_call', round(ph.get('first_call',0)), 'timing', round(ph.get('timing',0)), 'total', round(ph.get('total',0)), 'cases', [round(c.get('phases_ms',{}).get('first_call',0)) for c in r.get('cases',[])], 'pre', p.get('status'), round(p.get('first_call_ms',0)), round(p.get('phases_ms',{}).get('total',0)))" "$f"; done 2>&1 | head -60
  grep -h "compiled ahead\|compiling .* Triton" runs/cb/*/opt/kopt_runs/*/*.log 2>/dev/null | head; grep -h "compiled ahead" "$OUT"/corpus_bench/*/optimize.log 2>/dev/null | head
  grep -E '^(=== (optimize|sweep|corpus)|corpus-bench|\| )' "$OUT/cb.log" | cut -c1-400 | tail -30
fi
(cd "$OUT" && tar czf /tmp/call_s41.tgz . 2>/dev/null && find . -mindepth 1 -delete && mv /tmp/call_s41.tgz .)
echo "=== end [$(( $(date +%s) - T0 )) s]"
