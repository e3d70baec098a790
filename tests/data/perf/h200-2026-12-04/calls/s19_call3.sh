#!/usr/bin/env bash
# Call 3 (session 19): the ephemeral seed for Triton kernels (helper branch triton, merged at 6a1a5d1): the GPU tests,
# then kopt optimize on the Triton softmax example (its final champion checked on the ephemeral seed).
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. Triton GPU tests $(el)"
(cd python && KOPT_BIN=$K timeout 240 python3 -m pytest -q -s tests/test_triton_gpu.py -k ephemeral 2>&1 | tail -40) | tee $OUT/triton_gpu_tests.log | grep -vE "^\s*$" | tail -30
echo "=== 2. optimize triton_softmax $(el)"
s=$(date +%s.%N)
timeout 200 $K optimize examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=8192 --n_cols=4096 --iterations 2 --branches 3 --measure-budget-s 1 --out-dir runs/tri > $OUT/tri_opt.log 2>&1
echo "rc=$? $(python3 -c "import time;print(round(time.time()-$s,1))") s"
grep -iE "ephemeral|Whole wall|gate 4|champion i|stopped" $OUT/tri_opt.log | head -20
d=$(ls -d runs/tri/kopt_runs/run_* | head -1); python3 -c "import json,sys; s=json.load(open(sys.argv[1]+'/state.json')); print(json.dumps(s['gate_records'].get('ephemeral_seed'))[:600])" "$d"
echo "=== end $(el)"
