#!/usr/bin/env bash
# Device check 34 (2026-12-02, eighth session, nvidia-h200), at most CHECK34_S (default 560) seconds: Kernel Tuner
# live on the sgemm_tunable 4096^3 space (scripts/perf/kt_sgemm.py, 60 evaluations at most), the runs CHECK34_RUNS
# lists as STRATEGY:SEED (default: the ones that bring random_sample, genetic_algorithm and bayes_opt to five seeds
# each with the seventh session's), each while time is left; then, with CHECK34_TIMING set, the quick timing table
# (scripts/device/timing_check.sh with TIMING_QUICK=1, issue 17).
# Run there: bash scripts/device/check34.sh   (carry [".carry", ".whl"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK34_S:-560} ))
start_check
cat .carry/build/COMMIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import kernel_tuner, scipy, sklearn; print("kernel_tuner", kernel_tuner.__version__, "scipy", scipy.__version__, "sklearn", sklearn.__version__)'
mkdir -p runs/kt
RUNS=${CHECK34_RUNS:-"random_sample:2 genetic_algorithm:4 bayes_opt:4 random_sample:3 genetic_algorithm:5 bayes_opt:5 random_sample:4 random_sample:5"}
for r in $RUNS; do
  st=${r%%:*} seed=${r##*:}
  L=$(( END - $(date +%s) - 10 ))
  [ "$L" -gt 45 ] || { echo "=== kt $st seed $seed skipped: $L s left"; continue; }
  step "kt live $st seed $seed" "$L" python3 scripts/perf/kt_sgemm.py --strategy "$st" --seed "$seed" \
    --max-fevals "${CHECK34_FEVALS:-60}" --cache "runs/kt/kt_${st}_s${seed}_cache.json" --out "runs/kt/kt_${st}_s$seed.json" 2>&1 | tail -4
  tar czf "$OUT/kt_live.tgz" -C runs kt 2>/dev/null
done
if [ -n "${CHECK34_TIMING:-}" ]; then
  L=$(( END - $(date +%s) - 5 ))
  [ "$L" -gt 100 ] && OUT="$OUT" TIMING_QUICK=1 timeout "$L" bash scripts/device/timing_check.sh 2>&1 | tail -40
fi
finish_check
