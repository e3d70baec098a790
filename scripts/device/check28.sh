#!/usr/bin/env bash
# Device check 28 (2026-12-01, sixth session, nvidia-h200), about 9.5 minutes: the new runner GPU tests (a race that
# trusts the checked champion, a one-seed check), then issue 16's live runs of sgemm_tunable 4096^3, kopt's default
# flags and a 70 s budget (25% of the 274 s sweep is 68.5 s), seeds CHECK28_SEEDS (default 1 2 3 4), each cut once
# its budget is spent (scripts/device/seed_runs.sh). Within 3% means <= 1.03 x 3.0185 ms (the 2026-11-30 sweep).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/check28.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
start_check
cat .carry/build/COMMIT
step "runner GPU tests" 60 .carry/build/kopt_tests --gtest_filter="${CHECK28_TESTS:-RunnerGpu.ARace*:RunnerGpu.CheckMode*:RunnerGpu.Paired*}" 2>&1 | \
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|^\[trust\]" | tail -12
seed_runs sgemm "${CHECK28_BUDGET:-70}" 3.0185 "${CHECK28_SEEDS:-1 2 3 4}" -- examples/sgemm_tunable/kernel.cu \
  --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096
(cd runs && tar czf "$OUT/seed_runs.tgz" --exclude='*.so' --exclude='golden*' --exclude='*.cubin' --exclude='*.ncu-rep' \
  --exclude=build --exclude='*.safetensors' sgemm_seed* 2>/dev/null)
finish_check
