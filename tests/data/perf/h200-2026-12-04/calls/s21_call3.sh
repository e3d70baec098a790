#!/usr/bin/env bash
# Call 3 (session 21): time to result at f8939c8, cold then warm (the second identical run now orders the first run's
# champion first among its finalists: champion marks, schema v4; the summary's --json written by the command line);
# then issue 35's liger_rms_norm (Triton) after the KOPT_KERNEL_ORIGIN fix (call 2: its derived copy could not find
# the fetched package; optimize stopped at the inputs gate).
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. time to result $(el)"
TTR_OPT_LIMIT_S=140 timeout 300 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "Whole wall|rc=|history" | cut -c1-300
cp -r runs/json $OUT/ttr_json 2>/dev/null
grep -hE "ordered first|champion:|reused finalist" $OUT/ttr_opt_warm.log | cut -c1-260 | head -12
for r in runs/ttr_opt1 runs/ttr_opt2; do
  d=$(ls -d $r/kopt_runs/run_* 2>/dev/null | head -1); [ -n "$d" ] || continue
  python3 - "$d" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/state.json"))
c = s.get("champion") or {}
cand = c.get("candidate", {})
print(sys.argv[1], "champion", cand.get("id"), json.dumps(cand.get("config") or cand.get("params")), c.get("median_ms"), "stop", s.get("stop_reason"))
PY
done
echo "=== 2. corpus-bench liger_rms_norm $(el)"
l=$(( 560 - ($(date +%s) - T0) ))
CB_TIME_BUDGET_S=40 CB_DEADLINE_S=$((l - 10)) CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=100 timeout $l bash scripts/device/check.sh corpus-bench liger_rms_norm 2>&1 \
  | grep -vE "^\s*$" | grep -E "^corpus|===|rc=|Kernels run|Median" | tail -20
mv $OUT/corpus_bench.tgz $OUT/s21_call3_corpus_bench.tgz 2>/dev/null
echo "=== end $(el)"
