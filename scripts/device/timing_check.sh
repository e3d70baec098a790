#!/usr/bin/env bash
# Device check: timing that matches the GPU (issue 17), one H200, about 4 minutes.
# Prepare here:  cmake --build build && bash scripts/device/carry_timing.sh
# Run there:     bash scripts/device/timing_check.sh      (device tool: carry ["build", ".carry/timing", ".carry/wheels"])
#
# For each kernel, on the same golden inputs (the first seed kopt bench made):
#   kopt bench     gpu_ms (cold L2, launch excluded: events_blocked), its robust CV, call_ms, the method
#   Nsight Compute gpu__time_duration.sum, --clock-control none --cache-control all, 15 calls, median per call
#   nvbench        cuda-bench's cold measurement (blocking kernel, L2 flush), median GPU time
# then the GPU tests of the new timing, and a final table (also in $OUT/timing_table.txt, rows in runs/json).
# Kernels: y = 2x + 1 at 1M and 4M, softmax 4096 x 1024, sgemm_tunable's champion at 4096^3, a two-kernel
# solve(), y = 2x + 1 on a non-blocking stream and y = 2x + 1 with cudaDeviceSynchronize() inside (both must be
# timed, with the fallback method named, never hung). Two more kopt rows at 1M: the old host-launched method
# (--timing-method events_default_stream, what kopt measured before) and --l2 warm.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
W=runs/timing
mkdir -p "$W" runs/json/timing
rm -f "$W/rows.json"
LIBS=.carry/timing
TK=scripts/device/timing_kernels
SBS="python3 scripts/device/timing_side_by_side.py"
CALLS=15
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
[ -d "$LIBS" ] || echo "WARNING: no $LIBS: run scripts/device/carry_timing.sh here first (ncu and nvbench columns stay empty)"
ncu --version 2>/dev/null | tail -1; python3 --version
# nvbench's Python package from the carried wheels (no network there).
if ls .carry/wheels/cuda_bench-*.whl >/dev/null 2>&1; then
  step "install cuda-bench" 60 python3 -m pip install -q --no-index --find-links .carry/wheels --target /tmp/kopt_nvbench_py cuda-bench cuda-bindings
  export PYTHONPATH=/tmp/kopt_nvbench_py${PYTHONPATH:+:$PYTHONPATH}
  python3 -c "import cuda.bench as b; print('cuda-bench', b.__version__)" || echo "WARNING: cuda.bench does not import"
else
  echo "WARNING: no .carry/wheels/cuda_bench-*.whl: the nvbench column stays empty"
fi

# one NAME LIB KERNEL REF NVBENCH_FLAGS KOPT_ARGS...
one() {
  local name=$1 lib=$LIBS/$2.so kernel=$3 ref=$4 nvflags=$5; shift 5
  step "kopt bench $name" 100 "$K" bench "$kernel" --ref "$ref" "$@" --seeds 1 --no-reference-timing --measure-budget-s 2 \
    --json "$W/$name.bench.json" --out-dir "$W/$name" >"$W/$name.bench.log" 2>&1
  sed -n '/^timing/,$p' "$W/$name.bench.log" | head -6
  local G; G=$(ls -d "$W/$name"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
  if [ -n "$G" ] && [ -f "$lib" ]; then
    step "ncu $name" 60 "$NCU" --profile-from-start off --clock-control none --cache-control all \
      --metrics gpu__time_duration.sum --csv --print-units base --log-file "$W/$name.ncu.csv" \
      python3 scripts/device/timing_side_by_side.py calls --lib "$lib" --golden "$G" --calls $CALLS >/dev/null
    step "nvbench $name" 60 $SBS nvbench --lib "$lib" --golden "$G" --name "$name" --json "$W/$name.nvbench.json" \
      $nvflags >"$W/$name.nvbench.log" 2>&1
    grep -E "Possible Deadlock|Error|error" "$W/$name.nvbench.log" | head -3
  fi
  $SBS row --rows "$W/rows.json" --name "$name" --bench "$W/$name.bench.json" --ncu "$W/$name.ncu.csv" \
    --calls $CALLS --nvbench "$W/$name.nvbench.json" >/dev/null
}
# runner_row NAME LIB GOLDEN_OF ARGS...: kopt's runner alone on the harness library (other methods, warm L2).
runner_row() {
  local name=$1 lib=$LIBS/$2.so of=$3; shift 3
  local G; G=$(ls -d "$W/$of"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
  [ -n "$G" ] && [ -f "$lib" ] || return
  step "kopt runner $name" 60 "$K" __runner --lib "$lib" --golden "$G" --out "$W/$name.runner.json" --mode time \
    --max-time-s 2 "$@"
  python3 - "$W/$name.runner.json" "$W/rows.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); rows = json.load(open(sys.argv[2]))
t, c = r.get("timing") or {}, r.get("call") or {}
ti = r.get("timing_info") or {}
rows.append({"name": sys.argv[3], "kopt": {"gpu_ms": t.get("median_ms"), "robust_cv": t.get("robust_cv"),
             "call_ms": c.get("median_ms"), "method": r.get("timing_method"), "clock": ti.get("gpu_clock"),
             "event_ms": ti.get("event_median_ms")}, "ncu_ms": None, "nvbench_ms": None})
json.dump(rows, open(sys.argv[2], "w"), indent=1)
print(r["status"], r.get("timing_method"), r.get("l2"), ti.get("gpu_clock"), ti.get("gpu_clock_off_reason_text"),
      "cupti_missing", ti.get("cupti_missing"), json.dumps(ti.get("probe")))
PY
}

# TIMING_QUICK=1: only the kernels the L2 flush question is about (4M, softmax, two kernels) and their memset-flush
# rows, no GPU tests (about 90 s). TIMING_NO_TESTS=1: every kernel, no GPU tests (about 150 s).
QUICK=${TIMING_QUICK:-0}
SGEMM_BEST="-DBM=128 -DBN=128 -DBK=8 -DTM=8 -DTN=8 -DSTAGES=2 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_CP_ASYNC_PIPELINE=0 -DKOPT_SMEM_PADDING=0"
[ "$QUICK" = 1 ] || one axpb_1m axpb $TK/axpb/kernel.cu $TK/axpb/ref.py "" --n=1048576
one axpb_4m axpb $TK/axpb/kernel.cu $TK/axpb/ref.py "" --n=4194304
one softmax_4096x1024 softmax examples/softmax/kernel.cu examples/softmax/ref.py "" --rows=4096 --cols=1024
[ "$QUICK" = 1 ] || one sgemm_best_4096 sgemm_best examples/sgemm_tunable/kernel.cu examples/sgemm_tunable/ref.py "" \
  --M=4096 --N=4096 --K=4096 $SGEMM_BEST
one two_kernels_4m two_kernels $TK/two_kernels/kernel.cu $TK/two_kernels/ref.py "" --n=4194304
[ "$QUICK" = 1 ] || one side_stream_4m axpb_side_stream $TK/axpb_side_stream/kernel.cu $TK/axpb_side_stream/ref.py "" --n=4194304
[ "$QUICK" = 1 ] || one syncs_inside_4m axpb_syncs $TK/axpb_syncs/kernel.cu $TK/axpb_syncs/ref.py "--sync" --n=4194304
runner_row "axpb_1m old method" axpb axpb_1m --timing-method events_default_stream
runner_row "axpb_1m warm L2" axpb axpb_1m --l2 warm
# The memset-only flush (KOPT_L2_FLUSH=memset, kopt's flush before 2026-12-01; the default is now the memset and
# then a read pass, so the L2 holds clean lines; docs/RUNNER.md, "The L2 flush"): the 10-25% it costs at 13-27 us.
(export KOPT_L2_FLUSH=memset
 runner_row "axpb_1m memset flush" axpb axpb_1m
 runner_row "axpb_4m memset flush" axpb axpb_4m
 runner_row "softmax memset flush" softmax softmax_4096x1024
 runner_row "two_kernels memset flush" two_kernels two_kernels_4m)
(export KOPT_CUPTI=0; runner_row "axpb_1m events clock" axpb axpb_1m)

# The GPU tests of the new timing (they build their kernels with nvcc here).
[ "$QUICK" = 1 ] || [ -n "${TIMING_NO_TESTS:-}" ] || step "gpu tests" 300 .carry/build/kopt_tests --gtest_filter='RunnerGpu.*:Blocker.*:TimingMethod.*:Watchdog.*:Cupti*' 2>&1 | tail -40

echo "=== side by side"
$SBS table --rows "$W/rows.json" | tee "$OUT/timing_table.txt"
cp "$W/rows.json" "$W"/*.bench.json "$W"/*.nvbench.json "$W"/*.runner.json runs/json/timing/ 2>/dev/null
for f in "$W"/*.bench.json; do
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[1], json.dumps(j['outcome']['details'].get('timing_info')))" "$f"
done
finish_check
