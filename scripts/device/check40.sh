#!/usr/bin/env bash
# Device check 40 (2026-12-02, eleventh session, nvidia-h200), about 60 s: y = 2x + 1 at 1M (8 MB moved, inside the
# L2) read 0.865x Nsight Compute with the clean flush in the session's timing table, where the memset flush read 1.00x.
# kopt's runner under every cold flush (KOPT_L2_FLUSH x KOPT_CODE_FLUSH) on the same library and golden inputs, and
# Nsight Compute around 25 calls with its own cache control and with it off after each of kopt's flushes.
# Run there: bash scripts/device/check40.sh   (carry [".carry/build", ".carry/timing"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
N=${CHECK40_N:-1048576}
W=runs/a1
mkdir -p "$W" runs/json/a1
SBS="python3 scripts/device/timing_side_by_side.py"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
"$K" bench scripts/device/timing_kernels/axpb/kernel.cu --ref scripts/device/timing_kernels/axpb/ref.py --n=$N --seeds 1 \
  --no-reference-timing --max-time-s 2 --json "$W/bench.json" --out "$W" >"$W/bench.log" 2>&1
G=$(ls -d "$W"/kopt_runs/bench_*/golden | head -1)
python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; print('KOPT bench gpu_ms median %.5f' % o['timing']['median_ms'])" "$W/bench.json"
for f in memset_then_read memset_then_discard memset; do
  for c in 0 1; do
    KOPT_L2_FLUSH=$f KOPT_CODE_FLUSH=$c timeout 60 "$K" __runner --lib .carry/timing/axpb.so --golden "$G" \
      --out "$W/$f.code$c.runner.json" --mode time --max-time-s 2 >/dev/null 2>&1
    python3 -c "import json,statistics as s,sys; r=json.load(open(sys.argv[1])); print('KOPT %s code=%s median %.3f us n %d robust_cv %.4f' % (sys.argv[2], sys.argv[3], s.median(r['samples_ms'])*1e3, len(r['samples_ms']), r['timing'].get('robust_cv',-1)))" "$W/$f.code$c.runner.json" "$f" "$c"
  done
done
for f in all memset_then_read memset_then_discard memset; do
  cc=none fl=$f
  [ "$f" = all ] && cc=all fl=none
  timeout 90 "$NCU" --profile-from-start off --clock-control none --cache-control $cc --kernel-name regex:axpb \
    --metrics gpu__time_duration.sum --csv --print-units base --log-file "$W/ncu_$f.csv" \
    $SBS calls --lib .carry/timing/axpb.so --golden "$G" --calls 25 --flush $fl >/dev/null 2>&1
  $SBS ncu-clocks --ncu "$W/ncu_$f.csv" --name "ncu_$f"
done
cp "$W"/*.json "$W"/*.csv runs/json/a1/ 2>/dev/null
finish_check
