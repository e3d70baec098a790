#!/usr/bin/env bash
# Call 1 (session 20): the honest Triton ephemeral-seed test after 30c05b2 (the sealed child keeps its TMPDIR; the
# gcc abort of calls 4-5), then the per-shape dispatch (`--dispatch`) on flashinfer_rmsnorm over 6 row widths.
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. Triton ephemeral GPU tests $(el)"
(cd python && KOPT_BIN=$K timeout 150 python3 -m pytest -q -s tests/test_triton_gpu.py -k ephemeral 2>&1) > $OUT/triton_gpu_tests.log
grep -E "\[evidence\]|passed|failed" $OUT/triton_gpu_tests.log | cut -c1-900
echo "=== 2. dispatch flashinfer_rmsnorm $(el)"
W=$(mktemp -d /tmp/disp.XXXX)
printf 'batch_size=8192 d=%s\n' 256 512 1024 4096 8192 32768 > $W/shapes.txt
printf 'batch_size=8192 d=128\nbatch_size=8192 d=768\nbatch_size=8192 d=2048\nbatch_size=1000 d=6144\nbatch_size=8192 d=65536\n' > $W/holdout.txt
C=examples/corpus/flashinfer_rmsnorm
timeout 400 $K optimize $C/kernel.cu --ref $C/ref.py --batch_size=8192 --d=4096 \
  -I examples/corpus/_fetched/flashinfer-python-0.5.3/include --shapes $W/shapes.txt --holdout-shapes $W/holdout.txt \
  --dispatch --iterations 8 --out-dir $W > $OUT/dispatch.log 2>&1
echo "rc=$?"
grep -vE "^ +i[0-9]+c|^\s*$" $OUT/dispatch.log | tail -70
d=$(ls -d $W/kopt_runs/run_* 2>/dev/null | head -1)
[ -n "$d" ] && { sed -n '/Per-shape dispatch/,/^## [A-Z]/p' $d/summary.md; cp $d/state.json $OUT/dispatch_state.json; cp $d/summary.md $OUT/dispatch_summary.md; tar czf $OUT/dispatch_run.tgz -C $d --exclude='*.so' --exclude=golden --exclude='*.ncu-rep' . ; }
echo "=== end $(el)"
