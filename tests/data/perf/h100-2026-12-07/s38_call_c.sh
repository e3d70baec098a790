#!/usr/bin/env bash
# Session 38, call C (kopt 4414790, the judge's copy fixed): (1) the GPU tests of the shared buffer and of the sealed
# seed at 2^24 + 1 floats; (2) CUB's scan optimized at 2^26, its held-out shapes (n = 2^25 + 1 among them) checked;
# (3) vector_add with every cache cold once more, then over its cache.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
mkdir -p "$OUT" runs
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; cat .carry/build/COMMIT
timeout 120 .carry/build/kopt_tests --gtest_filter='SharedBuffer.*:RunnerGpu.TheSealedSeed*:RunnerGpu.CorrectKernelPassesAndIsTimed' 2>&1 | grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |runner\]' | cut -c1-300
echo "--- cub optimize [$(( $(date +%s) - T0 )) s]"
CO_CAP_S=100 timeout 120 bash scripts/device/check.sh corpus-optimize cub_inclusive_sum >"$OUT/co.log" 2>&1; echo "co rc=$?"
grep -E '^co_|held-out|tile_plus|tile_minus|primes|unit_n' "$OUT/co.log" | cut -c1-300 | head -12
grep -hE 'tile_plus_one|tile_minus_one|primes|unit_n' "$OUT"/co_cub*log 2>/dev/null | cut -c1-300 | head -6
echo "--- vector_add cold [$(( $(date +%s) - T0 )) s]"
TTR_COLD_RUNS=1 timeout 100 bash scripts/device/check.sh time-to-result cold >"$OUT/ttr.log" 2>&1; echo "ttr rc=$?"
grep -E '^ttr_' "$OUT/ttr.log"
(cd "$OUT" && tar czf call_s38c.tgz --exclude=call_s38c.tgz . 2>/dev/null)
echo "=== end [$(( $(date +%s) - T0 )) s]"
