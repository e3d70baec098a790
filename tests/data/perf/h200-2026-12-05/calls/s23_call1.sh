#!/usr/bin/env bash
# Call 1 (session 23), at db08141, in priority order under one deadline:
# (1) issue 35's cutlass_layernorm at a 40 s search budget;
#     with its space swept at the workload matrix's other two cases too (corpus_bench.sh step iv, 5b0a283);
# (3) issue 39's warm-start tables at a second batch size, the hidden size kept (bench + sweep only):
#     flashinfer_rmsnorm 2048 x 4096, flashinfer_silu_and_mul 8192 x 14336;
# (4) where an Nsight Compute profile's and the doctor's time goes (KOPT_NCU wrapped, timestamps);
# (5) where a Triton corpus kernel's time goes: kopt bench of liger_softmax at 4096 x 4096, cold then warm.
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, .carry/cutlass.tgz, .carry/diag,
# examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
left() { echo $(( 580 - ($(date +%s) - T0) )); }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
cb() {  # cb TAG WALL_S ENV... -- NAMES...: one corpus-bench invocation, its outputs kept under $OUT/TAG
  local tag=$1 wall=$2; shift 2
  local envs=() ; while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  [ "$(left)" -gt 60 ] || { echo "=== $tag: skipped, $(left) s left"; return; }
  [ "$wall" -lt "$(left)" ] || wall=$(left)
  echo "=== $tag (cap ${wall} s) $(el)"
  env "${envs[@]}" CB_WALL_S=$wall CB_DEADLINE_S=$((wall - 10)) timeout $((wall + 10)) bash scripts/device/check.sh corpus-bench "$@" 2>&1 \
    | grep -vE "^\s*$" | grep -E "^corpus|===|rc=|Kernels run|Median|wall" | tail -12
  mkdir -p "$OUT/$tag"; mv $OUT/corpus_bench.tgz $OUT/corpus_table.* "$OUT/$tag/" 2>/dev/null
}
cb s23c1_layernorm40 270 CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=100 CB_OPT_LIMIT_S=100 -- cutlass_layernorm
cb s23c1_newdims 130 CB_STEPS="bench sweep" CB_MIN_KERNEL_S=40 CB_DIMS_flashinfer_rmsnorm="--batch_size=2048 --d=4096" \
  CB_DIMS_flashinfer_silu_and_mul="--num_tokens=8192 --d=14336" -- flashinfer_rmsnorm flashinfer_silu_and_mul
echo "=== 4. where an Nsight Compute profile's time goes (vector_add 2^24) $(el)"
if [ "$(left)" -gt 60 ]; then
  export KOPT_DATA_DIR=$PWD/data REAL_NCU=$(command -v ncu) NCU_TIMED_LOG=$OUT/ncu_timed.log KOPT_PROFILE_CACHE=off
  ( time KOPT_NCU=$PWD/.carry/diag/ncu_timed.sh timeout 40 .carry/build/kopt doctor >$OUT/doctor.log 2>&1 ) 2>&1 | grep real
  for i in 1 2; do
    ( time KOPT_NCU=$PWD/.carry/diag/ncu_timed.sh timeout 60 .carry/build/kopt profile examples/vector_add/kernel.cu --ref examples/vector_add/ref.py \
        --n=16777216 --out-dir runs/prof$i 2>&1 | while IFS= read -r l; do echo "[$(date +%s.%N | cut -c1-14)] $l"; done >$OUT/profile_$i.log ) 2>&1 | grep real
  done
  printf '#include <cuda_profiler_api.h>\n__global__ void k(float* x) { x[threadIdx.x] += 1; }\nint main() { float* x; cudaMalloc(&x, 4096); cudaProfilerStart(); k<<<1, 256>>>(x); cudaProfilerStop(); cudaDeviceSynchronize(); return 0; }\n' >/tmp/triv.cu
  nvcc -arch=sm_90 -o /tmp/triv /tmp/triv.cu && ( time /tmp/triv ) 2>&1 | grep real
  for s in "--section SpeedOfLight" "--section SpeedOfLight --section LaunchStats --section Occupancy"; do
    ( time .carry/diag/ncu_timed.sh --profile-from-start off --target-processes all --clock-control none --cache-control all $s /tmp/triv >/dev/null 2>&1 ) 2>&1 | grep real
  done
  cut -c1-400 $OUT/ncu_timed.log
fi
echo "=== 5. Triton: kopt bench liger_softmax, cold then warm $(el)"
for t in cold warm; do
  [ "$(left)" -gt 30 ] || { echo "skipped: $(left) s left"; break; }
  timeout $(( $(left) - 5 )) .carry/build/kopt bench examples/corpus/liger_softmax/kernel.py --ref examples/corpus/liger_softmax/ref.py \
    --n_rows=4096 --n_cols=4096 --json $OUT/liger_softmax_bench_$t.json 2>&1 \
    | while IFS= read -r l; do echo "[$(( $(date +%s) - T0 ))] $l"; done > $OUT/liger_softmax_bench_$t.log
  echo "rc=${PIPESTATUS[0]}"; grep -E "wall|worker|median" $OUT/liger_softmax_bench_$t.log | head -6
done
echo "=== end $(el)"
