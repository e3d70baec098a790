#!/usr/bin/env bash
# Session 38, call B: (1) a golden seed file's fsync on this machine's disk (192 MB, with and without); (2) the judge's
# copy that lost a buffer's last bytes (shared_buffer.cpp's split): kopt bench of CUB's scan at n = 2^25 + 1 and of
# vector_add at 2^24 + 1, by kopt before the fix (.carry/bk) and after (.carry/nk); (3) issue 36 with the fixed kopt and
# unsynced seed files: vector_add cold once, then sgemm_tunable seeds 1-5 cut at 47 s.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-560}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" runs .carry/build
cp .carry/nk/* .carry/build/
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
df -h . | tail -1
python3 - <<'PY'
import os, time, hashlib
data = os.urandom(192 << 20)
for sync in (True, False, True, False, True, False):
    t = time.perf_counter()
    with open("runs/wtest.bin", "wb") as f:
        f.write(data); f.flush()
        if sync: os.fsync(f.fileno())
    t1 = time.perf_counter(); hashlib.sha256(data).hexdigest(); t2 = time.perf_counter()
    print("fsync " if sync else "nosync", round(t1 - t, 3), "s; sha256", round(t2 - t1, 3), "s", flush=True)
os.unlink("runs/wtest.bin")
PY
echo "--- the judge's tail [$(( $(date +%s) - T0 )) s]"
D=examples/corpus/cub_inclusive_sum
for v in bk nk; do
  timeout 90 .carry/$v/kopt bench $D/kernel.cu --ref $D/ref.py --n=33554433 --no-reference-timing --json $OUT/cub_$v.json \
    --out-dir runs/cub_$v >$OUT/cub_$v.log 2>&1; echo "cub 2^25+1 kopt=$v rc=$?"
  timeout 60 .carry/$v/kopt bench examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777217 --no-reference-timing \
    --json $OUT/vadd_$v.json --out-dir runs/vadd_$v >$OUT/vadd_$v.log 2>&1; echo "vadd 2^24+1 kopt=$v rc=$?"
  for k in cub vadd; do python3 -c "
import json; j=json.load(open('$OUT/${k}_$v.json')); o=j.get('outcome',{}); print('  $k $v:', o.get('status'), (o.get('message') or '')[:240])" 2>&1; done
done
echo "--- vector_add cold [$(( $(date +%s) - T0 )) s]"
TTR_COLD_RUNS=1 timeout 100 bash scripts/device/check.sh time-to-result cold >"$OUT/ttr.log" 2>&1; echo "ttr rc=$?"
grep -E '^ttr_' "$OUT/ttr.log"
grep -h 'golden-batch: request' runs/ttr_cold1/kopt_runs/*/golden_stream.log 2>/dev/null | head -2
echo "--- sgemm seeds [$(( $(date +%s) - T0 )) s]"
timeout $(( $(left) - 5 )) bash scripts/device/check.sh time-to-result sgemm-seeds >"$OUT/ttr_sg.log" 2>&1; echo "sgemm rc=$?"
grep -E '^ttr_' "$OUT/ttr_sg.log"
(cd "$OUT" && tar czf call_s38b.tgz --exclude=call_s38b.tgz . 2>/dev/null)
echo "=== end [$(( $(date +%s) - T0 )) s]"
