#!/usr/bin/env bash
# Session 38, call A (H200): (1) the harness's device snapshot of inputs (CUDA tests); (2) CUB's inclusive sum at
# n = 2^25 + 1: which side is wrong; (3) golden data for vector_add at 2^24, 3 seeds: harness before (5c4d1b4) and
# after (877f31f), alternated; (4) issue 36 on the H200: vector_add cold twice then over its cache (doctor checks
# timed), bench of a second candidate with the worker.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-540}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" runs .carry/build
cp .carry/bk/* .carry/build/
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
(cd python && timeout 60 python3 -m pytest -q tests/test_torch.py tests/test_golden.py -k "cuda or snapshot or modifying" 2>&1 | tail -4)
echo "--- cub [$(( $(date +%s) - T0 )) s]"
timeout 60 python3 .carry/s37/cub_check.py .carry/s37/cub_sum.so 2>&1 | tail -8
echo "--- golden A/B [$(( $(date +%s) - T0 )) s]"
S=$PWD/.carry/s37
for r in 1 2 3; do for v in old new; do
  if [ $v = old ]; then PP=$S/oldpy; else PP=$PWD/python; fi
  rm -rf /tmp/g_$v$r
  PYTHONPATH=$PP timeout 60 python3 -m kopt_harness golden --ref examples/vector_add/ref.py --signature $S/sig_vadd.json \
    --dims '{"n":16777216}' --seeds 3 --out /tmp/g_$v$r --time-reference 2>&1 | tail -1 | python3 -c "
import json,sys
t=sys.stdin.read()
try: j=json.loads(t); print('$v$r', j['elapsed_s'], j['phase_seconds'])
except Exception: print('$v$r', t[:300])"
done; done
echo "--- time to result [$(( $(date +%s) - T0 )) s]"
timeout $(( $(left) - 5 )) bash scripts/device/check.sh time-to-result cold bench-worker >"$OUT/ttr.log" 2>&1; echo "ttr rc=$?"
grep -E '^(ttr_|hostile|phases ttr_bw)' "$OUT/ttr.log" | cut -c1-400 | head -70
for c in 1 2; do grep -h 'golden-batch: request' runs/ttr_cold$c/kopt_runs/*/golden_stream.log 2>/dev/null | head -4; done
python3 - <<'PY'
import glob, json
for f in sorted(glob.glob("runs/ttr_cold*/kopt_runs/*/gates/hardware.json")):
    j = json.load(open(f)); r = j.get("report", j)
    print(f.split("/")[1], "doctor checks (s):", {c["name"]: c.get("seconds") for c in r.get("checks", [])})
PY
(cd "$OUT" && tar czf call_s38a.tgz --exclude=call_s38a.tgz . 2>/dev/null)
echo "=== end [$(( $(date +%s) - T0 )) s]"
