#!/usr/bin/env bash
# Device check 4: an interrupted optimize run resumed; the Triton and CUTLASS backends through bench, sass,
# optimize and profile. CUTLASS headers travel in .carry/cutlass (scripts/carry_cutlass.sh).
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 CUTLASS_PATH=$PWD/.carry/cutlass
K=$PWD/.carry/build/kopt
exec > >(tee $OUT/log.txt) 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N); echo "=== $name: $*"; timeout $limit "$@"; local rc=$?; echo "=== $name rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; }
date -u
tar xzf .carry/cutlass.tgz -C .carry
mkdir -p runs
step resume_start 60 timeout -s INT 42 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=2048 --N=2048 --K=2048 --iterations 2 --max-time-s 0.5 --out runs/resume
R=$(ls -d runs/resume/kopt_runs/run_* | head -1); ls $R; python3 -c "import json;s=json.load(open('$R/state.json'));print('after interrupt: iterations_done',s['iterations_done'],'gates_passed',s['gates_passed'],'stop_reason',repr(s['stop_reason']))"
step resume 150 $K optimize --resume $R --quiet
python3 -c "import json;s=json.load(open('$R/summary.json'));print('resumed run:',s['stop'],s['headline'])"; cp $R/summary.md $OUT/resume_summary.md
echo "--- per-candidate overhead: kopt __runner --mode check (process start, golden load, 3 seeds), sgemm 2048^3"
for i in 1 2 3; do /usr/bin/time -f "runner check wall %e s" $K __runner --lib $(ls $R/iter_01/candidates/i1c1/kernel.so) --golden $R/golden --out /tmp/oh.json --mode check; python3 -c "import json;print(json.load(open('/tmp/oh.json'))['status'])"; done
TS="examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=16384 --n_cols=4096"
step triton_bench 90 $K bench $TS --out runs/tr
step triton_sass 60 $K sass examples/triton_softmax/kernel.py --n_rows=1024 --n_cols=4096 --out runs/trs
step triton_optimize 170 $K optimize $TS --iterations 1 --branches 2 --max-time-s 0.5 --out runs/tro
cp runs/tro/kopt_runs/*/summary.md $OUT/triton_summary.md 2>/dev/null
CG="examples/cutlass_gemm/kernel.cu --ref examples/cutlass_gemm/ref.py --M=4096 --N=4096 --K=4096"
step cutlass_bench 150 $K bench $CG --out runs/cb
step cutlass_sass 60 $K sass examples/cutlass_gemm/kernel.cu --arch sm_90a
step cutlass_optimize 200 $K optimize $CG --iterations 1 --branches 2 --max-time-s 0.5 --out runs/co
cp runs/co/kopt_runs/*/summary.md $OUT/cutlass_summary.md 2>/dev/null
step triton_profile 90 $K profile $TS --out runs/trp
mkdir -p $OUT/cubins; find runs/trs -name '*.cubin' | head -2 | xargs -I{} cp {} $OUT/cubins/ 2>/dev/null
ls -la $OUT
