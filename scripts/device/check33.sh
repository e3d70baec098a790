#!/usr/bin/env bash
# Device check 33 (2026-12-01, seventh session, nvidia-h200), at most CHECK33_S (default 570) seconds: the GPU
# comparison's tests, then issue 16's live runs of sgemm_tunable 4096^3 with kopt's default flags (since this
# session: 12 candidates an iteration, every new champion ablated, a faster ablation variant selected, SASS analysis
# off the measuring path) and a 70 s budget, seeds CHECK33_SEEDS (default 1 2 3), each cut once its budget is spent
# (scripts/device/seed_runs.sh), while time is left; then, with CHECK33_KT set, Kernel Tuner's genetic algorithm and
# Bayesian optimisation live on the same space (scripts/perf/kt_sgemm.py; carry .whl too).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check33.sh   (carry [".carry"], and ".whl" with CHECK33_KT=1)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
END=$(( $(date +%s) + ${CHECK33_S:-570} ))
start_check
cat .carry/build/COMMIT
step "GPU tests" 60 .carry/build/kopt_tests --gtest_filter="${CHECK33_TESTS:-DeviceCompareGpu.*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|Expected|Which is|actual|difference" | tail -30
for s in ${CHECK33_SEEDS:-1 2 3}; do
  [ $(( END - $(date +%s) )) -gt 160 ] || { echo "=== seed $s skipped: $(( END - $(date +%s) )) s left"; continue; }
  seed_runs sgemm "${CHECK33_BUDGET:-70}" 3.0185 "$s" -- examples/sgemm_tunable/kernel.cu \
    --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096
done
if [ -n "${CHECK33_KT:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  python3 -c 'import kernel_tuner, scipy, sklearn; print("kernel_tuner", kernel_tuner.__version__, "scipy", scipy.__version__, "sklearn", sklearn.__version__)'
  mkdir -p runs/kt
  for st in genetic_algorithm bayes_opt; do
    L=$(( END - $(date +%s) - 10 ))
    [ "$L" -gt 30 ] || { echo "=== kt $st skipped: $L s left"; continue; }
    step "kt live $st" "$L" python3 scripts/perf/kt_sgemm.py --strategy "$st" --seed 1 --max-fevals "${CHECK33_KT_FEVALS:-60}" \
      --cache "runs/kt/kt_${st}_cache.json" --out "runs/kt/kt_$st.json" 2>&1 | tail -6
  done
  tar czf "$OUT/kt_live.tgz" -C runs kt 2>/dev/null
fi
finish_check
