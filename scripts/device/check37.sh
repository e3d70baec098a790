#!/usr/bin/env bash
# Device check 37 (2026-12-02, tenth session): why the softmax reads 0.947x Nsight Compute (issue 17; docs/PERFORMANCE.md
# §5, "With the clean L2 flush"). The reading to test: kopt's samples run one after another on a GPU kept busy at
# its working clock, Nsight Compute's 15 calls each after the host's synchronisation and ncu's own save, flush and
# restore (idle gaps), so the compute part of the softmax (the exponentials) runs at a lower SM clock under ncu.
# For the softmax 4096 x 1024 and y = 2x + 1 at 4M (memory-bound, the control), on the same library and golden inputs:
#   kopt bench        gpu_ms (kernel clock), with nvidia-smi sampling the SM and memory clocks every 20 ms meanwhile
#   ncu, idle         as timing_check.sh (--cache-control all --clock-control none), plus the clocks ncu saw
#                     (gpc__cycles_elapsed.avg.per_second, dram__cycles_elapsed.avg.per_second)
#   ncu, busy         the same, each call right after a 2 ms spin kernel on every SM (timing_side_by_side.py calls
#                     --keep-busy-us 2000; ncu --kernel-name profiles the kernel of solve() only); CHECK37_BUSY=0
#                     leaves it out
#   ncu, kopt's flush --cache-control none, the calls script flushing the L2 as kopt does before each call (the
#                     memset and the read pass; then the memset alone)
# About 90 s. Prepare here: cmake --build build && bash scripts/device/carry_build.sh && bash scripts/device/carry_timing.sh
# Run there: bash scripts/device/check37.sh   (carry [".carry/build", ".carry/timing"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -n "${K:-}" ] || start_check
W=runs/clock
mkdir -p "$W" runs/json/clock
CALLS=${CHECK37_CALLS:-25}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
SBS="python3 scripts/device/timing_side_by_side.py"
nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
# clocks NAME CMD...: CMD with nvidia-smi sampling the clocks every 20 ms; appends the SM clock's quartiles to
# $W/clocks.txt (the caller may redirect CMD's output), printed at the end.
clocks() {
  local name=$1; shift
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu --format=csv,noheader,nounits -lms 20 \
    >"$W/$name.smi.csv" 2>/dev/null &
  local p=$!
  "$@"
  kill "$p" 2>/dev/null; wait "$p" 2>/dev/null
  { python3 - "$W/$name.smi.csv" "$name" <<'PY'
import sys
rows = [l.split(",") for l in open(sys.argv[1]) if l.count(",") >= 3]
busy = sorted(int(r[1]) for r in rows if r[3].strip() not in ("0",))
idle = sorted(int(r[1]) for r in rows if r[3].strip() in ("0",))
q = lambda xs, f: xs[int(f * (len(xs) - 1))] if xs else None
print("CLOCKS %s: %d samples busy, SM MHz p10/p50/p90 %s/%s/%s; %d idle, SM MHz p50 %s" % (
    sys.argv[2], len(busy), q(busy, .1), q(busy, .5), q(busy, .9), len(idle), q(idle, .5)))
PY
  } >>"$W/clocks.txt"
}
# ncu_run NAME LIB GOLDEN KERNEL_REGEX BUSY_US [CACHE_CONTROL FLUSH]
ncu_run() {
  local name=$1 lib=$2 g=$3 kre=$4 busy=$5 cc=${6:-all} flush=${7:-none}
  clocks "$name" timeout 120 "$NCU" --profile-from-start off --clock-control none --cache-control "$cc" \
    --kernel-name "regex:$kre" \
    --metrics gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second,gpc__cycles_elapsed.max \
    --csv --print-units base --log-file "$W/$name.ncu.csv" \
    $SBS calls --lib "$lib" --golden "$g" --calls "$CALLS" --keep-busy-us "$busy" --flush "$flush" >/dev/null
  $SBS ncu-clocks --ncu "$W/$name.ncu.csv" --name "$name"
}
# probe NAME LIB KERNEL REF KERNEL_REGEX ARGS...
probe() {
  local name=$1 lib=.carry/timing/$2.so kernel=$3 ref=$4 kre=$5; shift 5
  clocks "kopt_$name" step "kopt bench $name" 100 "$K" bench "$kernel" --ref "$ref" "$@" --seeds 1 \
    --no-reference-timing --max-time-s 2 --json "$W/$name.bench.json" --out "$W/$name" >"$W/$name.bench.log" 2>&1
  python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; t=o['timing']; ti=o['details'].get('timing_info',{}); print('KOPT %s: gpu_ms median %.4f robust_cv %.4f n %s clock %s event %.4f flush %s' % (sys.argv[2], t['median_ms'], t.get('robust_cv',-1), t.get('samples', t.get('n')), ti.get('gpu_clock'), ti.get('event_median_ms') or -1, ti.get('l2_flush')))" "$W/$name.bench.json" "$name"
  local G; G=$(ls -d "$W/$name"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
  [ -n "$G" ] && [ -f "$lib" ] || { echo "no golden data or no $lib"; return; }
  # kopt's runner on the same library with the memset flush alone (KOPT_L2_FLUSH=memset), beside the bench's figure.
  KOPT_L2_FLUSH=memset timeout 60 "$K" __runner --lib "$lib" --golden "$G" --out "$W/$name.memset.runner.json" --mode time \
    --max-time-s 2 >/dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r['timing']; print('KOPT %s memset flush: gpu_ms median %.4f robust_cv %.4f %s' % (sys.argv[2], t['median_ms'], t.get('robust_cv',-1), (r.get('timing_info') or {}).get('l2_flush')))" "$W/$name.memset.runner.json" "$name"
  ncu_run "${name}_ncu_idle" "$lib" "$G" "$kre" 0
  [ "${CHECK37_BUSY:-1}" = 1 ] && ncu_run "${name}_ncu_busy" "$lib" "$G" "$kre" 2000
  # ncu without its own cache control, after kopt's flush (the clean one, then the memset alone) before each call.
  ncu_run "${name}_ncu_koptflush" "$lib" "$G" "$kre" 0 none memset_then_read
  ncu_run "${name}_ncu_memsetflush" "$lib" "$G" "$kre" 0 none memset
}
probe softmax softmax examples/softmax/kernel.cu examples/softmax/ref.py softmax_rows --rows=4096 --cols=1024
probe axpb_4m axpb scripts/device/timing_kernels/axpb/kernel.cu scripts/device/timing_kernels/axpb/ref.py axpb --n=4194304
cat "$W/clocks.txt"
cp "$W"/*.bench.json "$W"/*.runner.json "$W"/*.ncu.csv "$W"/*.smi.csv runs/json/clock/ 2>/dev/null
[ "${CHECK37_ALONE:-1}" = 1 ] && finish_check
true
