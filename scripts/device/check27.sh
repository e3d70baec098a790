#!/usr/bin/env bash
# Device check 27 (2026-12-01, sixth session, nvidia-h200), about 9.5 minutes: the runner's GPU tests on this build
# (a race that trusts the checked champion, --checked-first, and the worker's probe cache), then issue 16's live
# runs of sgemm_tunable 4096^3 with kopt's default flags and a 70 s wall budget (25% of the exhaustive sweep is
# 68.5 s), seeds CHECK27_SEEDS (default 1 2 3 4), then a Triton bench if time is left (the backend enum's build).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check27.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK27_S:-575} ))
left() { echo $(( END - $(date +%s) )); }
cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
step "runner GPU tests" 150 .carry/build/kopt_tests \
  --gtest_filter="${CHECK27_TESTS:-RunnerGpu.*:Cupti*:Blocker*:TimingMethod*:Watchdog*:GoldenStore.*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|^\[trust\]|^\[worker\]" | tail -30
CHECK15_SEEDS="${CHECK27_SEEDS:-1 2 3 4}" CHECK15_BUDGET=${CHECK27_BUDGET:-70} timeout "$(( $(left) - 5 ))" bash scripts/device/check15.sh
L=$(left)
if [ "$L" -gt 45 ]; then
  step "triton bench" $((L - 5)) .carry/build/kopt bench examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py \
    --n_rows=4096 --n_cols=1024 --max-time-s 0.5 --no-reference-timing --out runs/triton_bench 2>&1 | tail -12
fi
ls -la "$OUT"
