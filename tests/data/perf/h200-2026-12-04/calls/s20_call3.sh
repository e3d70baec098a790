#!/usr/bin/env bash
# Call 3 (session 20): time to result after c598f65 (the baseline's build beside the hardware gate, the reference
# timing's cheaper CI checks, the held-out shapes' golden data beside the final checks), cold then warm; why every
# Python process compiles torch's bytecode again on this machine; then issue 35's benchmark on three corpus kernels
# not yet run.
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 0. bytecode $(el)"
python3 - <<'PY' 2>&1 | head -8
import os, sys, importlib.util, torch
print("dont_write_bytecode", sys.flags.dont_write_bytecode, "PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"), "prefix", sys.pycache_prefix)
pyc = importlib.util.cache_from_source(torch.__file__)
print("torch", torch.__file__, "pyc", pyc, "exists", os.path.exists(pyc), "dir writable", os.access(os.path.dirname(torch.__file__), os.W_OK))
PY
echo "=== 1. time to result $(el)"
TTR_OPT_LIMIT_S=140 timeout 300 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -vE "^ +[0-9.]+ +\| |^ +[0-9.]+ *$" | grep -E "gate|golden|compil|first|iteration|held-out|verif|phases|history|whole|Whole|profil|=== " | cut -c1-300 | tail -70
cp -r runs/json $OUT/ttr_json 2>/dev/null
echo "=== 2. corpus-bench $(el)"
left=$(( 555 - ($(date +%s) - T0) ))
CB_DEADLINE_S=$((left - 15)) CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=90 timeout $left bash scripts/device/check.sh corpus-bench flashinfer_gelu_tanh_and_mul flashinfer_merge_state flashinfer_online_softmax 2>&1 | grep -vE "^\s*$" | grep -E "^corpus|===|rc=|Kernels run" | tail -25
cat $OUT/corpus_table.md 2>/dev/null | head -8
echo "=== end $(el)"
