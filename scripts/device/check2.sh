#!/usr/bin/env bash
# Device check 2: ceilings, bench (twice, for reproducibility), roofline, profile, a default optimize run,
# the Python harness on CUDA, and the GPU unit tests. Logs and run directories go to $OUT.
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
K=$PWD/.carry/build/kopt
L=$OUT/log.txt
exec > >(tee $L) 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N); echo "=== $name: $*"; timeout $limit "$@"; local rc=$?; echo "=== $name rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; }
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
mkdir -p runs
step ceilings 300 $K roofline --ceilings-only --json $OUT/ceilings.json
step bench_vadd_1 120 $K bench examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 --out runs --json $OUT/bench_vadd_1.json
step bench_vadd_2 120 $K bench examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 --out runs --json $OUT/bench_vadd_2.json
step bench_sgemm 180 $K bench examples/sgemm_naive/kernel.cu --ref examples/sgemm_naive/ref.py --M=2048 --N=2048 --K=2048 --out runs --json $OUT/bench_sgemm.json
step roofline_vadd 120 $K roofline examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 --out runs
step roofline_sgemm 120 $K roofline examples/sgemm_naive/kernel.cu --ref examples/sgemm_naive/ref.py --M=2048 --N=2048 --K=2048 --out runs
step profile_vadd 180 $K profile examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 --out runs
step profile_sgemm 180 $K profile examples/sgemm_naive/kernel.cu --ref examples/sgemm_naive/ref.py --M=2048 --N=2048 --K=2048 --out runs
step pytest 120 bash -c "cd python && python3 -m pytest -q tests 2>&1 | tail -5"
step optimize_vadd 240 $K optimize examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 --out runs
step gtests 200 $K"_tests" --gtest_filter='*Gpu*:Ceilings*'
python3 - <<'PY'
import json
a=json.load(open('/root/out/bench_vadd_1.json'.replace('/root/out', __import__('os').environ['OUT'])))
b=json.load(open(__import__('os').environ['OUT']+'/bench_vadd_2.json'))
ma=a['outcome']['timing']['median_ms']; mb=b['outcome']['timing']['median_ms']
print(f"vadd repro: {ma:.5f} ms vs {mb:.5f} ms: diff {abs(ma-mb)/min(ma,mb)*100:.2f}%")
PY
tar czf $OUT/runs.tgz runs
ls -la $OUT
