#!/usr/bin/env bash
# Device check "peers" (issue 16): the measurements the peer comparison needs from one H200 session, lean.
#   1. the exhaustive sweep of examples/sgemm_tunable at 4096^3 (scripts/perf/search_efficiency.sh: every
#      configuration compiled, then timed; per-configuration compile and measurement seconds in compiled/ and
#      costs.csv) -- about 4 minutes;
#   2. Kernel Tuner live on the same kernel and space (scripts/perf/kt_sgemm.py: random_sample, seed 1, 20
#      evaluations), the cachefile of this session's table (peers.py cache) and the calibration of the simulation
#      against the live run (peers.py calibrate) -- about 1 minute.
# Optional, by environment (each costs device minutes; the lead decides):
#   PEERS_SWEEPS="transpose reduction"  also sweep those examples' spaces (8192 x 8192; 2^26), ~1-2 min each;
#   PEERS_KOPT_SEEDS="1 2 3 4 5"        kopt optimize on sgemm_tunable 4096^3 with default flags (plus
#                                       $PEERS_KOPT_FLAGS), one run per seed, ~2 min each.
# Run from the repository root on the GPU machine with the binaries in .carry/build and Kernel Tuner's wheels in
# .whl (docs/history/PERFORMANCE-2026-11-30-to-2026-12-02.md §6, "How it is measured", lists them):
#   run(command="set -o pipefail; bash scripts/device/peers_check.sh 2>&1 | tee $OUT/log.txt",
#       carry=[".carry", ".whl"], timeout_s=600)
# What comes back in $OUT: log.txt, se_<example>.tgz (each sweep without libraries and golden data),
# kt_live.tgz (kt_live.json, Kernel Tuner's own cachefile, the session's cachefile, calibration.txt),
# kopt_runs.tgz (when PEERS_KOPT_SEEDS is set) and runs_json.tgz (finish_check).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c 'import kernel_tuner, numpy, scipy, sklearn; print("kernel_tuner", kernel_tuner.__version__)' \
  || echo "peers_check: Kernel Tuner is not importable: step 2 will fail (carry .whl, see docs/PERFORMANCE.md)"
python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>/dev/null || echo "cupy: not importable"
python3 -c 'from cuda.bindings import driver; import cuda.bindings; print("cuda.bindings", cuda.bindings.__version__)' 2>/dev/null \
  || echo "cuda.bindings: not importable"
KT_DERIVE='block_size_x=(BM/TM)*(BN/TN)'

sweep() {  # sweep NAME LIMIT_S ARGS...: search_efficiency.sh into runs/se_NAME, packed as $OUT/se_NAME.tgz
  local name=$1 limit=$2; shift 2
  step "sweep $name" "$limit" bash scripts/perf/search_efficiency.sh --jobs "$(nproc)" --runs 10 --out "runs/se_$name" "$@" </dev/null
  tar czf "$OUT/se_$name.tgz" -C runs --exclude='*.so' --exclude=golden --exclude='*.cubin' "se_$name" 2>/dev/null
}

# 1. sgemm_tunable's exhaustive sweep (5 rounds, 64 configurations per runner process: about 4 minutes).
sweep sgemm 420 --size 4096 --rounds 5 --chunk 64

# 2. Kernel Tuner live, then the calibration of its simulation against this session's table.
mkdir -p runs/kt
if [ -f runs/se_sgemm/measurements.csv ]; then
  step "kt cache" 60 python3 scripts/perf/peers.py cache runs/se_sgemm/measurements.csv \
    --kernel runs/se_sgemm/kernel_subspace.cu --kernel-name sgemm_tunable --problem-size 4096,4096 \
    --derive "$KT_DERIVE" --sweep runs/se_sgemm --out runs/kt/sgemm_cache.json
fi
step "kt live (auto backend)" 150 python3 scripts/perf/kt_sgemm.py --strategy random_sample --seed 1 --max-fevals 20 \
  --cache runs/kt/kt_live_cache.json --out runs/kt/kt_live.json
if [ ! -f runs/kt/kt_live.json ]; then  # CuPy's compile path failed: Kernel Tuner's cuda-python backend instead
  step "kt live (nvcuda backend)" 150 python3 scripts/perf/kt_sgemm.py --lang nvcuda --strategy random_sample --seed 1 \
    --max-fevals 20 --cache runs/kt/kt_live_cache.json --out runs/kt/kt_live.json
fi
if [ -f runs/kt/kt_live.json ] && [ -f runs/kt/sgemm_cache.json ]; then
  step "kt calibrate" 120 python3 scripts/perf/peers.py calibrate --live runs/kt/kt_live.json \
    --cache runs/kt/sgemm_cache.json --kernel runs/se_sgemm/kernel_subspace.cu --derive "$KT_DERIVE" \
    --out runs/kt/calibration.txt
fi
tar czf "$OUT/kt_live.tgz" -C runs kt 2>/dev/null

# Optional: the other examples' spaces (kopt's target holds there too; Kernel Tuner is optional there).
for ex in ${PEERS_SWEEPS:-}; do
  case "$ex" in
    transpose) sweep transpose 240 --kernel examples/transpose/kernel.cu --dims "--rows=8192 --cols=8192" --flops 67108864 ;;
    reduction) sweep reduction 240 --kernel examples/reduction/kernel.cu --dims "--n=67108864" --flops 67108864 ;;
    *) echo "peers_check: unknown sweep '$ex' (transpose, reduction)" ;;
  esac
done

# Optional: kopt's own live runs, one per seed (peers.py kopt-runs reads them).
if [ -n "${PEERS_KOPT_SEEDS:-}" ]; then
  for s in $PEERS_KOPT_SEEDS; do
    # shellcheck disable=SC2086  # PEERS_KOPT_FLAGS is a list of flags
    step "kopt optimize seed $s" 300 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py \
      --M=4096 --N=4096 --K=4096 --search-seed "$s" ${PEERS_KOPT_FLAGS:-} --out-dir "runs/kopt_seed$s" </dev/null >"runs/kopt_seed$s.log" 2>&1
    tail -3 "runs/kopt_seed$s.log"
    summ "kopt_seed$s"
  done
  (cd runs && tar czf "$OUT/kopt_runs.tgz" --exclude='*.so' --exclude=golden --exclude='*.cubin' --exclude='*.ncu-rep' \
    kopt_seed*)
fi
finish_check
