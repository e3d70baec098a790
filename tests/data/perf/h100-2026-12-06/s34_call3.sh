#!/usr/bin/env bash
# Session 34, calls 3 and 4 (issue 36), on call 2's machine while it was warm (the session's last device seconds):
#  call 3: Kernel Tuner bayes_opt seeds 2-3 (30 evaluations each), then optimize vector_add 2^24 over fresh kopt caches
#          (the doctor's counters pass of call 2 kept: ~/.cache/kopt/doctor was not removed);
#  call 4: Kernel Tuner bayes_opt seeds 4-5.
# As run (carry .carry/build and .whl; one command line each):
set -o pipefail; export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1; mkdir -p $OUT/k runs/kt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site
for seed in ${SEEDS:-2 3}; do t0=$(date +%s.%N); timeout 45 python3 scripts/perf/kt_sgemm.py --strategy bayes_opt --seed $seed --max-fevals 30 --cache runs/kt/c$seed.json --out $OUT/k/kt_bayes_opt_s$seed.json 2>&1 | tail -1; echo "kt seed $seed step wall $(python3 -c "import time;print(round(time.time()-$t0,2))")"; done
[ -n "${KT_ONLY:-}" ] && exit 0  # call 4: SEEDS="4 5" KT_ONLY=1
. scripts/device/lib.sh; rm -rf runs/va_cold3
( KOPT_CACHE_DIR=$PWD/runs/cache_va3 timeout -s INT 60 .carry/build/kopt optimize examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216 --out-dir runs/va_cold3 </dev/null 2>&1 | stamp > $OUT/k/va_cold3.log )
d=$(ls -d runs/va_cold3/kopt_runs/*_*|head -1); cp $d/state.json $OUT/k/va_cold3_state.json
tar czf $OUT/call3.tgz -C $OUT k
