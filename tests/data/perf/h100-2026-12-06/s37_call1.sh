#!/usr/bin/env bash
# Session 37, call A: the two fixes of session 36 on a GPU. (1) issue 36's time to result: vector_add with every
# cache cold twice, then a run over the last cache (the stored champion must keep its place: ~7 s, not 22);
# sgemm_tunable seeds 1-5 cut at 47 s; bench of a second candidate with the worker, hostile verdicts with/without.
# (2) issue 35's CUB inclusive sum (int32 workload model): must measure candidates, not stop at the roofline gate.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-575}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" runs
. scripts/device/lib.sh
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 470 bash scripts/device/check.sh time-to-result cold sgemm-seeds bench-worker >"$OUT/ttr.log" 2>&1; echo "ttr rc=$? at $(( $(date +%s) - T0 )) s"
grep -E '^(ttr_|hostile verdicts|bench|phases ttr_b|step)' "$OUT/ttr.log" | tail -40
K=$PWD/.carry/build/kopt
for c in 1 2; do i=0; for m in runs/ttr_cache_cold$c/golden/*/manifest.json; do i=$((i+1)); cp "$m" "$OUT/golden_cold${c}_$i.json" 2>/dev/null; done
  cp runs/ttr_cold$c/kopt_runs/*/golden_stream.log "$OUT/golden_stream_cold$c.log" 2>/dev/null; done
python3 -c "
import json,glob
for f in sorted(glob.glob('$OUT/golden_cold*.json')):
  m=json.load(open(f)); print(f.split('/')[-1], m.get('dims'), 'ref timing', (m.get('reference_timing') or {}).get('median_ms'), (m.get('reference_timing') or {}).get('n'), m.get('meta',{}).get('phase_seconds'))" 2>&1 | tail -8
grep -h 'phase_seconds' "$OUT"/golden_stream_cold*.log | head -6
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
cap=$(( $(left) - 12 )); [ $cap -gt 90 ] && cap=90
if [ $cap -gt 30 ]; then
  ( timeout -s INT $cap $K optimize examples/corpus/cub_inclusive_sum/kernel.cu --ref examples/corpus/cub_inclusive_sum/ref.py --n=67108864 \
      --time-budget 20 --out-dir runs/ns_cub </dev/null 2>&1 | stamp >"$OUT/ns_cub.log" )
  echo "cub rc=$? cap $cap"
  d=$(ls -d runs/ns_cub/kopt_runs/run_* 2>/dev/null | head -1)
  [ -n "$d" ] && cp "$d/state.json" "$OUT/ns_cub_state.json" && python3 scripts/perf/ttr_summary.py "$d/state.json" --name cub
  grep -iE 'roofline|unmodel|integer|candidates|champion|stop' "$OUT/ns_cub.log" | tail -12
else echo "cub: not started ($(left) s left)"; fi
(cd "$OUT" && tar czf call_s37a.tgz --exclude=call_s37a.tgz . 2>/dev/null)
echo "=== end [$(( $(date +%s) - T0 )) s]"
