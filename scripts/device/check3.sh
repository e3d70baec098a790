#!/usr/bin/env bash
# Device check 3: kopt optimize end to end. vector add (memory-bound negative control), a baseline that fails
# the correctness gate, the tunable SGEMM at 4096^3 with defaults, and an interrupted run that is resumed.
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
K=$PWD/.carry/build/kopt
exec > >(tee $OUT/log.txt) 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N); echo "=== $name: $*"; timeout $limit "$@"; local rc=$?; echo "=== $name rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; }
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
mkdir -p runs
step ceilings 120 $K roofline --ceilings-only --json $OUT/ceilings.json
step opt_vadd 200 $K optimize examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 --out runs/vadd
cp runs/vadd/kopt_runs/*/summary.md $OUT/vadd_summary.md
step opt_wrong 120 $K optimize tests/data/kernels/vadd_wrong.cu --ref examples/vector_add/ref.py --n=1048576 --out runs/wrong
echo "--- wrong baseline run dir:"; ls runs/wrong/kopt_runs/*/; cat runs/wrong/kopt_runs/*/stop.json | head -12
step opt_sgemm 330 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 --max-time-s 1 --out runs/sgemm
cp runs/sgemm/kopt_runs/*/summary.md $OUT/sgemm_summary.md; cp runs/sgemm/kopt_runs/*/summary.json $OUT/sgemm_summary.json
step opt_resume_start 95 timeout -s INT 75 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=2048 --N=2048 --K=2048 --iterations 2 --max-time-s 0.5 --out runs/resume
R=$(ls -d runs/resume/kopt_runs/run_* | head -1); echo "--- interrupted run: $R"; ls $R; python3 -c "import json;s=json.load(open('$R/state.json'));print('iterations_done',s['iterations_done'],'gates',s['gates_passed'],'stop',repr(s['stop_reason']))"
step opt_resume 200 $K optimize --resume $R
ls $R
for d in runs/vadd runs/sgemm runs/resume; do for f in $d/kopt_runs/*/summary.json; do cp $f $OUT/$(echo $d | tr / _)_summary.json; done; done
tar czf $OUT/runs_json.tgz $(find runs -name '*.json' -size -2M) 2>/dev/null
ls -la $OUT
