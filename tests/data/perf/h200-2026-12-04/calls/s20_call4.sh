#!/usr/bin/env bash
# Call 4 (session 20): time to result after 03e58ff (the baseline's sanitizer beside the cases' checks; kopt's Python
# children keep torch's bytecode under kopt's cache, this machine setting PYTHONDONTWRITEBYTECODE), cold then warm.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
TTR_OPT_LIMIT_S=110 timeout 235 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "Whole wall|rc=|history" | cut -c1-300
cp -r runs/json $OUT/ttr_json 2>/dev/null
ls ${KOPT_CACHE_DIR:-$HOME/.cache/kopt}/pycache 2>/dev/null | head -3; du -sh ${KOPT_CACHE_DIR:-$HOME/.cache/kopt}/pycache 2>/dev/null
echo "=== end $(el)"
