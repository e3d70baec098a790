#!/usr/bin/env bash
# Device check 32 (2026-12-01, seventh session, nvidia-h200), at most CHECK32_S (default 580) seconds: checks on the
# GPU (golden data resident there, runner/device_golden.h) — their GPU tests and the runner's — then issue 16's live
# runs of sgemm_tunable 4096^3 with kopt's default flags and a 70 s budget, seeds CHECK32_SEEDS (default 1 2), each
# cut once its budget is spent (scripts/device/seed_runs.sh), while time is left.
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check32.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
END=$(( $(date +%s) + ${CHECK32_S:-580} ))
start_check
cat .carry/build/COMMIT
step "GPU tests" 200 .carry/build/kopt_tests --gtest_filter="${CHECK32_TESTS:-DeviceCompareGpu.*:RunnerGpu.*:Blocker*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|^\[trust\]|^\[worker\]|Expected|Which is|actual" | tail -40
for s in ${CHECK32_SEEDS:-1 2}; do
  [ $(( END - $(date +%s) )) -gt 170 ] || { echo "=== seed $s skipped: $(( END - $(date +%s) )) s left"; continue; }
  seed_runs sgemm "${CHECK32_BUDGET:-70}" 3.0185 "$s" -- examples/sgemm_tunable/kernel.cu \
    --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096
  d=$(ls -d runs/sgemm_seed$s/kopt_runs/run_* | head -1)
  # One race's phases and where its checks ran (the first candidate of iteration 1).
  f=$(ls "$d"/iter_01/*/race*.json "$d"/iter_01/*/*paired*.json 2>/dev/null | head -1)
  [ -n "$f" ] && python3 -c "import json,sys; d=json.load(open('$f')); print('race', '$f', json.dumps(d.get('phases_ms')), json.dumps(d.get('golden_on_gpu')), [l.get('check',{}).get('checked_on') for l in d.get('libs',[])])"
done
finish_check
