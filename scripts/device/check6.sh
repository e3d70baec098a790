#!/usr/bin/env bash
# Device check 6 (an nvidia-h200-x2): the GPU suite (scripts/gpu_suite.sh list), its tests alternating between
# the two GPUs (CUDA_VISIBLE_DEVICES), each half in its own process; a table of exit codes and seconds.
set -u
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 CUTLASS_PATH=$PWD/.carry/cutlass KOPT_BIN=$PWD/.carry/build/kopt
exec > >(tee $OUT/log.txt) 2>&1
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
tar xzf .carry/cutlass.tgz -C .carry
mapfile -t TESTS < <(bash scripts/gpu_suite.sh list)
half() {
  local gpu=$1 i t0 rc
  for ((i = gpu; i < ${#TESTS[@]}; i += 2)); do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=$gpu KOPT_GPU_SUITE_DIR=/tmp/suite$gpu bash scripts/gpu_suite.sh ${TESTS[$i]} >/tmp/suite$gpu.$i.log 2>&1
    rc=$?
    printf '%-28s gpu%d exit %3d %7.1f s\n' "${TESTS[$i]}" "$gpu" "$rc" "$(python3 -c "import time;print(time.time()-$t0)")" >>$OUT/suite_gpu$gpu.txt
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || { echo "---- ${TESTS[$i]} (gpu$gpu) failed:"; tail -n 60 /tmp/suite$gpu.$i.log; } >>$OUT/failures_gpu$gpu.txt
  done
}
timeout 560 bash -c "$(declare -f half); TESTS=(\"\${@}\"); OUT=$OUT; half 0" _ "${TESTS[@]}" &
timeout 560 bash -c "$(declare -f half); TESTS=(\"\${@}\"); OUT=$OUT; half 1" _ "${TESTS[@]}" &
wait
date -u
cat $OUT/suite_gpu0.txt $OUT/suite_gpu1.txt
cat $OUT/failures_gpu*.txt 2>/dev/null | tail -n 150
# the key lines of some outputs
for f in /tmp/suite*/optimize_*/output.txt /tmp/suite*/roofline_*/output.txt; do echo "== $f"; grep -E "gates passed|vs |near|floor|efficiency|DRAM rate|champion \(" $f | head -12; done
tar czf $OUT/suite_outputs.tgz /tmp/suite0 /tmp/suite1 --exclude='*.so' --exclude='*.safetensors' --exclude='*.ncu-rep' --exclude='*.cubin' 2>/dev/null
ls -la $OUT
