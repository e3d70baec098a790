#!/usr/bin/env bash
# Call 2 (session 20): where a cold run's first seconds go (the golden harness under cProfile at vector_add 2^24 with
# torch on the GPU, as kopt runs it; kopt doctor cold then warm), then the per-shape dispatch on flashinfer_rmsnorm
# at 6 row widths of 2048 rows (call 1's 8192 x 32768 case made each candidate cost 5 s).
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
echo "=== 1. doctor cold, warm $(el)"
for i in 1 2; do /usr/bin/time -f "doctor %e s" timeout 60 $K doctor >/dev/null 2>$OUT/doctor_$i.err; tail -1 $OUT/doctor_$i.err; done
echo "=== 2. golden harness profile $(el)"
W=$(mktemp -d /tmp/gold.XXXX)
cat > $W/sig.json <<'J'
{"params":[{"name":"a","kind":"pointer","dtype":"float32","const":true},{"name":"b","kind":"pointer","dtype":"float32","const":true},{"name":"c","kind":"pointer","dtype":"float32","const":false},{"name":"n","kind":"scalar","dtype":"int32"}]}
J
for n in 16777216 12582912; do
(cd python && /usr/bin/time -f "golden wall %e s" timeout 90 python3 -m cProfile -s cumtime -m kopt_harness golden --ref ../examples/vector_add/ref.py \
  --signature $W/sig.json --dims "{\"n\":$n}" --out $W/g$n --time-reference --sealed-dir $W/s$n 2>&1) > $OUT/golden_profile_$n.txt
head -60 $OUT/golden_profile_$n.txt | cut -c1-160
done
python3 -X importtime -c "import torch; torch.zeros(1, device='cuda')" 2> $OUT/importtime.txt; sort -t'|' -k2 -n $OUT/importtime.txt | tail -3
/usr/bin/time -f "torch import + cuda init %e s" python3 -c "import torch; torch.zeros(1, device='cuda')"
echo "=== 3. dispatch flashinfer_rmsnorm $(el)"
printf 'batch_size=2048 d=%s\n' 256 512 1024 2048 4096 16384 > $W/shapes.txt
printf 'batch_size=2048 d=128\nbatch_size=2048 d=768\nbatch_size=1000 d=6144\nbatch_size=2048 d=8192\n' > $W/holdout.txt
C=examples/corpus/flashinfer_rmsnorm
timeout 380 $K optimize $C/kernel.cu --ref $C/ref.py --batch_size=2048 --d=4096 \
  -I examples/corpus/_fetched/flashinfer-python-0.5.3/include --shapes $W/shapes.txt --holdout-shapes $W/holdout.txt \
  --dispatch --iterations 4 --out-dir $W > $OUT/dispatch.log 2>&1
echo "rc=$?"
grep -vE "^ +i[0-9]+c|^\s*$|candidates measured: [0-9]+/[0-9]+, " $OUT/dispatch.log | tail -60 | cut -c1-400
d=$(ls -d $W/kopt_runs/run_* 2>/dev/null | head -1)
[ -n "$d" ] && { sed -n '/Per-shape dispatch/,/^## [A-Z]/p' $d/summary.md; cp $d/state.json $OUT/dispatch_state.json; cp $d/summary.md $d/summary.json $OUT/ 2>/dev/null; tar czf $OUT/dispatch_json.tgz -C $d $(cd $d && find . -name '*.json' -size -2M | grep -v golden) 2>/dev/null; }
echo "=== end $(el)"
