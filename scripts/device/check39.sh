#!/usr/bin/env bash
# Device check 39 (2026-12-02, eleventh session, nvidia-h200), about 4 minutes:
# 1. The runner's GPU tests with this session's flushes (KOPT_L2_FLUSH=memset_then_discard, KOPT_CODE_FLUSH=1) and the
#    runner child's RunMode/L2Mode (29dd7a4, cf4a695): kopt_tests --gtest_filter on the runner's, the clock's and the
#    timing method's GPU tests.
# 2. Issue 17: is the softmax's gap to Nsight Compute a fixed offset or a share of the kernel? kopt bench and ncu
#    (--cache-control all, 25 calls) on the softmax at 4096, 16384 and 65536 rows of 1024 (13 us to about 0.2 ms).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh && bash scripts/device/carry_timing.sh
# Run there: bash scripts/device/check39.sh   (carry [".carry/build", ".carry/timing"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
step "runner GPU tests" 300 .carry/build/kopt_tests \
  --gtest_filter='RunnerGpu.*:Blocker*:TimingMethod*:Watchdog*:Cupti*:CodeFlush*:TimerFlush*:RunnerChild*' 2>&1 \
  | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[runner\]|^\[==========\]|Failure|Expected|Which is|actual" | tail -90
W=runs/scale
mkdir -p "$W" runs/json/scale
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
SBS="python3 scripts/device/timing_side_by_side.py"
for rows in 4096 16384 65536; do
  n=softmax_$rows
  step "kopt bench $n" 120 "$K" bench examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=$rows --cols=1024 \
    --seeds 1 --no-reference-timing --max-time-s 2 --json "$W/$n.bench.json" --out "$W/$n" >"$W/$n.log" 2>&1
  python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; t=o['timing']; ti=o['details'].get('timing_info',{}); print('KOPT %s: gpu_ms median %.5f robust_cv %.4f clock %s event %.5f flush %s' % (sys.argv[2], t['median_ms'], t.get('robust_cv',-1), ti.get('gpu_clock'), ti.get('event_median_ms') or -1, ti.get('l2_flush')))" "$W/$n.bench.json" "$n" || tail -5 "$W/$n.log"
  G=$(ls -d "$W/$n"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
  [ -n "$G" ] || continue
  timeout 120 "$NCU" --profile-from-start off --clock-control none --cache-control all --kernel-name regex:softmax_rows \
    --metrics gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second --csv --print-units base \
    --log-file "$W/$n.ncu.csv" $SBS calls --lib .carry/timing/softmax.so --golden "$G" --calls 25 >/dev/null
  $SBS ncu-clocks --ncu "$W/$n.ncu.csv" --name "$n"
  cp "$W/$n.bench.json" "$W/$n.ncu.csv" runs/json/scale/ 2>/dev/null
  rm -rf "$W/$n/kopt_runs"/bench_*/golden
done
finish_check
