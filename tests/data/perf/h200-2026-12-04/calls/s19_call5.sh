#!/usr/bin/env bash
# Call 5 (session 19): the Triton child's TMPDIR fix (db6f397) through the honest ephemeral-seed GPU test; then
# issue 35's corpus benchmark on cutlass_layernorm with the feasibility model (helper branch coupled, 44b0adb).
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. Triton ephemeral GPU tests $(el)"
(cd python && KOPT_BIN=$K timeout 150 python3 -m pytest -q -s tests/test_triton_gpu.py -k ephemeral 2>&1) > $OUT/triton_gpu_tests.log
grep -E "\[evidence\]|passed|failed" $OUT/triton_gpu_tests.log | cut -c1-700
echo "=== 2. corpus-bench cutlass_layernorm $(el)"
CB_DEADLINE_S=260 CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=90 CB_WALL_S=280 timeout 290 bash scripts/device/check.sh corpus-bench cutlass_layernorm 2>&1 | grep -vE "^\s*$" | tail -25
cat $OUT/corpus_table.md 2>/dev/null | head -8
d=$(ls -d runs/cb/cutlass_layernorm/opt/kopt_runs/run_* 2>/dev/null | head -1)
[ -n "$d" ] && python3 - "$d" <<'PY'
import json, sys, glob
d = sys.argv[1]
s = json.load(open(d + "/state.json"))
h = s["history"]
print("history", len(h), "skipped", sum(1 for x in h if x.get("predicted_infeasible")), "unwritten", sum(1 for x in h if x.get("unwritten_fraction")))
for x in h:
    c = x["candidate"]; p = c.get("params", {})
    print(" ", c["id"], x.get("status"), x.get("median_ms"), json.dumps(p), x.get("unwritten_fraction"), (x.get("predicted_infeasible") or "")[:90])
print("wall", s.get("wall"))
PY
echo "=== end $(el)"
