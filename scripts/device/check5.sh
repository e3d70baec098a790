#!/usr/bin/env bash
# Device check 5 (session 2): the ceilings re-measured with the four-mix DRAM probe (and the int8 fix); the
# vector add (the negative control) through optimize at 2^26 and one float4 point benched; the Triton softmax
# through a full optimize, with the run directory's timeline (which step took how long).
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
K=$PWD/.carry/build/kopt
exec > >(tee $OUT/log.txt) 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N); echo "=== $name: $*"; timeout $limit "$@"; local rc=$?; echo "=== $name rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; }
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
mkdir -p runs
step ceilings 170 $K roofline --ceilings-only --remeasure --json $OUT/ceilings.json --svg $OUT/ceilings.svg
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864"
step vadd_optimize 200 $K optimize $VA --out runs/va
cp runs/va/kopt_runs/*/summary.md $OUT/vadd_summary.md 2>/dev/null
cp runs/va/kopt_runs/*/gates/roofline.json $OUT/vadd_roofline.json 2>/dev/null
step vadd_vec4 90 $K bench $VA -DKOPT_VECTORIZED_ACCESS=1 -DITEMS=4 --seeds 1 --no-reference-timing --out runs/vb
TS="examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=8192 --n_cols=4096"
step triton_optimize 230 $K optimize $TS --iterations 2 --branches 3 --max-time-s 1 --out runs/tro
R=$(ls -d runs/tro/kopt_runs/run_* | head -1)
cp $R/summary.md $OUT/triton_summary.md 2>/dev/null
echo "--- timeline of $R (modification times)"; find $R -printf '%TT %p\n' | sort | sed "s|$R/||" | grep -v '/cubins/' | head -150
ls -la $OUT
