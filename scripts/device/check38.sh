#!/usr/bin/env bash
# Device check 38 (2026-12-02, eleventh session, nvidia-h200), two parts, about 8 minutes:
# 1. Issue 17: what is left of the softmax's gap to Nsight Compute (docs/PERFORMANCE.md §5, "Why the softmax reads
#    below Nsight Compute": kopt 0.942x ncu's own cache control, 0.954x with the same clean flush on both sides).
#    Two readings to test, on the softmax 4096 x 1024 and y = 2x + 1 at 4M (the control), same library and golden
#    inputs, kopt's runner (`kopt __runner --mode time`) under four cold flushes:
#      clean            the default (memset, then a read pass: the L2 full of clean lines)
#      discard          KOPT_L2_FLUSH=memset_then_discard (memset, then discard.global.L2: the L2 left with no valid
#                       lines, as after ncu's --cache-control all)
#      clean+code       KOPT_CODE_FLUSH=1 (after the clean flush a ~570 KB straight-line kernel on every SM: the
#                       timed kernel's code is no longer in the SMs' instruction caches, as under ncu, whose calls
#                       each follow the host's synchronisation and ncu's own work)
#      discard+code     both
#    beside Nsight Compute with its own cache control and with --cache-control none after the discard flush
#    (timing_side_by_side.py calls --flush memset_then_discard).
# 2. Issue 16: reduction 2^26 live with the no-pick start (6d35c95: a declared space whose profile picks no declared
#    method gets a space-filling first batch), five seeds at 14 s (scripts/device/check36.sh), while time is left.
# Prepare here: cmake --build build --target kopt && bash scripts/device/carry_build.sh (kopt only is enough) &&
#   bash scripts/device/carry_timing.sh
# Run there: bash scripts/device/check38.sh   (carry [".carry/build", ".carry/timing"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
END=$(( $(date +%s) + ${CHECK38_S:-580} ))
start_check
cat .carry/build/COMMIT
W=runs/flush
mkdir -p "$W" runs/json/flush
CALLS=${CHECK38_CALLS:-25}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
SBS="python3 scripts/device/timing_side_by_side.py"
# runner NAME LIB GOLDEN TAG ENV...: kopt's runner on the library with the env's flush; one KOPT line.
runner() {
  local name=$1 lib=$2 g=$3 tag=$4; shift 4
  env "$@" timeout 90 "$K" __runner --lib "$lib" --golden "$g" --out "$W/$name.$tag.runner.json" --mode time \
    --max-time-s 2 >"$W/$name.$tag.runner.log" 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r['timing']; ti=r.get('timing_info') or {}; print('KOPT %s %s: gpu_ms median %.5f robust_cv %.4f n %s clock %s event %.5f flush %s code_flush %s' % (sys.argv[2], sys.argv[3], t['median_ms'], t.get('robust_cv',-1), len(r.get('samples_ms',[])), ti.get('gpu_clock'), ti.get('event_median_ms') or -1, ti.get('l2_flush'), ti.get('code_flush')))" "$W/$name.$tag.runner.json" "$name" "$tag" \
    || tail -3 "$W/$name.$tag.runner.log"
}
# ncu_run NAME LIB GOLDEN KERNEL_REGEX CACHE_CONTROL FLUSH
ncu_run() {
  local name=$1 lib=$2 g=$3 kre=$4 cc=$5 flush=$6
  timeout 120 "$NCU" --profile-from-start off --clock-control none --cache-control "$cc" --kernel-name "regex:$kre" \
    --metrics gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second --csv --print-units base \
    --log-file "$W/$name.ncu.csv" $SBS calls --lib "$lib" --golden "$g" --calls "$CALLS" --flush "$flush" >/dev/null
  $SBS ncu-clocks --ncu "$W/$name.ncu.csv" --name "$name"
}
# probe NAME LIB KERNEL REF KERNEL_REGEX ARGS...
probe() {
  local name=$1 lib=.carry/timing/$2.so kernel=$3 ref=$4 kre=$5; shift 5
  step "kopt bench $name" 100 "$K" bench "$kernel" --ref "$ref" "$@" --seeds 1 --no-reference-timing --max-time-s 2 \
    --json "$W/$name.bench.json" --out "$W/$name" >"$W/$name.bench.log" 2>&1
  local G; G=$(ls -d "$W/$name"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
  [ -n "$G" ] && [ -f "$lib" ] || { echo "no golden data or no $lib"; tail -5 "$W/$name.bench.log"; return; }
  runner "$name" "$lib" "$G" clean KOPT_L2_FLUSH=memset_then_read
  runner "$name" "$lib" "$G" discard KOPT_L2_FLUSH=memset_then_discard
  runner "$name" "$lib" "$G" clean_code KOPT_L2_FLUSH=memset_then_read KOPT_CODE_FLUSH=1
  runner "$name" "$lib" "$G" discard_code KOPT_L2_FLUSH=memset_then_discard KOPT_CODE_FLUSH=1
  ncu_run "${name}_ncu_all" "$lib" "$G" "$kre" all none
  ncu_run "${name}_ncu_discard" "$lib" "$G" "$kre" none memset_then_discard
  runner "$name" "$lib" "$G" clean2 KOPT_L2_FLUSH=memset_then_read   # the first again: drift across the probe
}
probe softmax softmax examples/softmax/kernel.cu examples/softmax/ref.py softmax_rows --rows=4096 --cols=1024
probe axpb_4m axpb scripts/device/timing_kernels/axpb/kernel.cu scripts/device/timing_kernels/axpb/ref.py axpb --n=4194304
cp "$W"/*.bench.json "$W"/*.runner.json "$W"/*.ncu.csv runs/json/flush/ 2>/dev/null
(cd runs && tar czf "$OUT/runs_json.tgz" json 2>/dev/null)
L=$(( END - $(date +%s) ))
echo "=== $L s left for the reduction seeds"
SEEDS=""
for s in ${CHECK38_SEEDS:-1 2 3 4 5}; do SEEDS="$SEEDS $s"; done
for s in $SEEDS; do
  L=$(( END - $(date +%s) ))
  # the first run computes the golden data (about 100 s), the next ones about 60 s
  [ "$L" -gt 75 ] || { echo "=== reduction seed $s skipped: $L s left"; continue; }
  seed_runs reduction 14 0.062815 "$s" -- examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=67108864
  summ "reduction_seed$s" >/dev/null
  (cd runs && tar czf "$OUT/reduction_states.tgz" reduction_seed*/kopt_runs/run_*/state.json reduction_seed*/kopt_runs/run_*/summary.json 2>/dev/null)
done
finish_check
