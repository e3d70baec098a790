#!/usr/bin/env bash
# Device check 41 (2026-12-02, eleventh session, nvidia-h200), about 60 s: call_ms with the kernel clock's recording
# paused around each call sample (KernelClock::pause/resume). kopt bench on y = 2x + 1 at 1M and 4M and the softmax,
# with the kernel clock and with KOPT_CUPTI=0 (before the pause: call_ms 20.3 against 15.1 us at 1M); then the
# runner's kernel-clock GPU tests.
# Run there: bash scripts/device/check41.sh   (carry [".carry/build"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
W=runs/call
mkdir -p "$W" runs/json/call
TK=scripts/device/timing_kernels
bench() {
  local name=$1 tag=$2; shift 2
  "$K" bench "$@" --seeds 1 --no-reference-timing --max-time-s 2 --json "$W/$name.$tag.json" --out "$W/$name" >"$W/$name.$tag.log" 2>&1
  python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; ti=o['details'].get('timing_info',{}); print('KOPT %s %s: gpu_ms %.5f call_ms %.5f clock %s cupti_missing %s' % (sys.argv[2], sys.argv[3], o['timing']['median_ms'], o['call']['median_ms'], ti.get('gpu_clock'), ti.get('cupti_missing')))" "$W/$name.$tag.json" "$name" "$tag" || tail -3 "$W/$name.$tag.log"
}
for n in 1048576 4194304; do
  bench axpb_$n clock $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=$n
  KOPT_CUPTI=0 bench axpb_$n events $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=$n
done
bench softmax clock examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=4096 --cols=1024
KOPT_CUPTI=0 bench softmax events examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=4096 --cols=1024
cp "$W"/*.json runs/json/call/ 2>/dev/null
step "kernel-clock GPU tests" 200 .carry/build/kopt_tests \
  --gtest_filter='RunnerGpu.CallSamples*:RunnerGpu.TheKernelClock*:RunnerGpu.KoptCupti0*:RunnerGpu.PairedModeKeeps*:RunnerGpu.TheDiscard*:Cupti*' 2>&1 \
  | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |call_ms|^\[==========\]|Failure|Expected|Which is" | tail -30
finish_check
