#!/usr/bin/env bash
# Device check 26 (2026-12-01, fifth session, nvidia-h200), about 9 minutes: the runner's GPU tests on this build
# (the worker's WorkerSpec, a request's slot/env), issue 21's one-GPU path (`--gpus all` on the single H200 must be
# today's path; `--gpus 0,1` refused at the hardware gate), then issue 15's sgemm_tiled with the workload matrix off
# (the primary case is the whole objective) and its sweep (CHECK26_S, default 560 s in all).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check26.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
END=$(( $(date +%s) + ${CHECK26_S:-560} ))
left() { echo $(( END - $(date +%s) )); }
start_check
cat .carry/build/COMMIT
step "runner GPU tests" 150 .carry/build/kopt_tests \
  --gtest_filter="${CHECK26_TESTS:-RunnerGpu.*:Cupti*:Blocker*:TimingMethod*:Watchdog*:GoldenStore.*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure" | tail -30
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216 --time-budget 15 --iterations 1 --branches 4 --max-time-s 0.5 --seeds 2"
step "optimize va --gpus 0,1" 60 $K optimize $VA --gpus 0,1 --out runs/va_gpus01 </dev/null >"$OUT/optimize_va_gpus01.log" 2>&1
echo "rc/log:"; tail -4 "$OUT/optimize_va_gpus01.log"
step "optimize va --gpus all" 160 $K optimize $VA --gpus all --out runs/va_gpus_all </dev/null >"$OUT/optimize_va_gpus_all.log" 2>&1
tail -22 "$OUT/optimize_va_gpus_all.log"
D=$(ls -d runs/va_gpus_all/kopt_runs/run_* 2>/dev/null | head -1)
[ -n "$D" ] && { cp "$D/summary.md" "$OUT/summary_va_gpus_all.md"; ls "$D"; grep -c "Measuring" "$D/summary.md";
  python3 -c "import json;s=json.load(open('$D/state.json'));print('measuring', json.dumps(s.get('measuring')))"; }
summ va_gpus_all
export PLAIN_CASE_SWEEPS=none PLAIN_OPT_FLAGS="--workload-matrix off"
L=$(left); [ "$L" -gt 200 ] && OPT_LIMIT_S=$(( L - 75 < 170 ? L - 75 : 170 )) plain_in "$L" sgemm_tiled
finish_check
