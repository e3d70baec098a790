#!/usr/bin/env bash
# The one entry point for kopt's checks on a GPU machine: bash scripts/device/check.sh SUITE [ARGS...]
# Run from the repository root there, with the binaries in .carry/build (here: cmake --build build &&
# bash scripts/device/carry_build.sh; the timing suites also need bash scripts/device/carry_timing.sh) and $OUT the
# folder whose files come back (default ./check_out). Every suite prints the date, the GPUs and the commit
# (.carry/build/COMMIT) and leaves its JSON in $OUT/runs_json_SUITE.tgz. Figures they produce: docs/PERFORMANCE.md.
#
# Suites (`--help` prints this table, and a suite is a row of it; python/tests/test_device_check.py checks both):
#   gpu-tests [FILTER]          kopt_tests' GPU tests (default: the runner's, the kernel clock's, the flushes'); the whole output in $OUT/gpu_tests_full.log (kept when a caller's timeout cuts the run)
#   gpu-suite                   scripts/gpu_suite.sh's end-to-end tests, spread over every GPU the machine has
#   ncu-captures                Nsight Compute captures of tests/data/profile/*/twok.cu for the profile parsers
#   sanitizer                   compute-sanitizer captures for the sanitizer parser (capture_sanitizer.sh)
#   ceilings                    the device ceilings re-measured (kopt roofline --ceilings-only --remeasure)
#   examples [NAME...]          kopt optimize on the examples with the commands of PERFORMANCE.md's example table
#   resume                      an optimize interrupted by SIGINT, then resumed with --resume
#   timing [quick|no-tests]     kopt beside Nsight Compute and nvbench (timing_check.sh)
#   flushes [KERNEL...]         kopt's runner under every cold flush beside Nsight Compute (softmax, axpb_4m, axpb_1m)
#   softmax-sizes               the softmax at 4096, 16384 and 65536 rows: kopt bench beside Nsight Compute
#   call-ms                     call_ms with the kernel clock on (paused per call sample) and with KOPT_CUPTI=0, each with and without fresh inputs
#   triton-overhead [ROWS...]   the Triton per-candidate overhead, direct and through the fork server
#   search-efficiency [KERNEL]  the exhaustive sweep of a declared space (sgemm_tunable, transpose or reduction)
#   seeds KERNEL [SEEDS]        kopt's live seeds against the stored sweep tables, budget 25% of the sweep's wall
#   sweep-seeds KERNEL [SEEDS]  the sweep in the same call, then the live seeds at 25% of its wall
#   kt-live [STRATEGY:SEED...]  Kernel Tuner live on sgemm_tunable 4096^3 (carry .whl)
#   peers                       the sweep and Kernel Tuner's calibration for the peer comparison (peers_check.sh)
#   plain [NAME...]             the plain kernels: optimize on the derived space and its sweep (plain_check.sh)
#   gates [RUN...]              the shapes and safety gates (gates_check.sh: va tr race oob uninit halo tile)
#   multi-gpu                   optimize with --gpus all, and --gpus 0,1 (refused on a one-GPU machine)
#   llm                         the language-model and manual generators against a mock endpoint (llm_check.sh)
#   report                      summary.html, export t4/csv read by Kernel Tuner, compare (report_check.sh)
#   corpus [NAME...]            kopt bench on the corpus's kernels at their typical dims (carry examples/corpus/_fetched)
#   evidence [PART...]          the hostile kernels and what fresh inputs cost (evidence_check.sh; PART: tests bench race optimize optimize_nofresh optimize_answer_key triton_answer_key)
#   corpus-optimize NAME[:CAP]...  kopt optimize on corpus kernels at their typical dims, --time-budget CO_BUDGET_S (20; none: kopt's default) under a SIGINT cap (CAP s, default CO_CAP_S, 110): what each measured, its walls (carry examples/corpus/_fetched, .carry/cutlass.tgz)
#   corpus-bench [NAME...]      issue 35's benchmark: optimize on each corpus kernel's derived space, its sweep and the project's choice (corpus_bench.sh; carry .carry/corpus_bench.txz, examples/corpus/_fetched)
#   time-to-result [PART...]    whole wall, stderr timestamped: optimize vector_add cold then warm, bench cold/warm/a second candidate, sgemm_tunable (PART: optimize optimize-cold cold bench bench-warm bench-worker corpus-page sgemm sgemm-seeds)
#   decisions [BUILD...]        one optimize per backend (CUDA, CUTLASS, Triton; same seed, no database) by each kopt build packed in .carry/builds.txz (pack_builds.sh), then kopt compare's decisions of each pair in order
#   warm-start                  the warm start's done-when: optimize vector_add at n=2^22, then n=2^24 over the same database and caches, with and without --no-warm-start
# Environment the wrapped scripts read still works (TIMING_*, GATES_RUNS, OPT_LIMIT_S, PLAIN_*, PEERS_*, ...).
# Exit codes: the suite's; 2 for an unknown suite or bad arguments.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
  sed -n '/^# Suites/,/^# Exit codes/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# The default seeds' tables: the stored sweeps (tests/data/perf/): best ms and the budget, 25% of the sweep's wall.
seeds_args() {  # seeds_args KERNEL -> "BEST BUDGET KERNEL_ARGS..."
  case "$1" in
    sgemm|sgemm_tunable) echo "3.018464 70 examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096" ;;
    transpose) echo "0.131775 14 examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192" ;;
    reduction) echo "0.062815 14 examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=67108864" ;;
    *) return 1 ;;
  esac
}

suite_gpu_tests() {
  start_check
  step "GPU tests" 400 .carry/build/kopt_tests \
    --gtest_filter="${1:-RunnerGpu.*:Blocker*:TimingMethod*:Watchdog*:Cupti*:CodeFlush*:TimerFlush*:RunnerChild*:GoldenStore.*:DeviceCompareGpu.*}" 2>&1 \
    | tee "$OUT/gpu_tests_full.log" | grep --line-buffered -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |^\[==========\]|^\[runner\] sealed seed|^judge 64 MiB|Failure|Expected|Which is|actual" | tail -120
}

suite_gpu_suite() {
  start_check
  export CUTLASS_PATH=$PWD/.carry/cutlass
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  local n_gpus g; n_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "$n_gpus" -ge 1 ] || n_gpus=1
  bash scripts/gpu_suite.sh list >runs/suite_list.txt
  # Every n_gpus-th test on each GPU, one after the other; one table per GPU (test, exit code, seconds).
  for ((g = 0; g < n_gpus; g++)); do
    (
      export CUDA_VISIBLE_DEVICES=$g
      n=0
      while read -r t e; do
        if [ $((n % n_gpus)) = "$g" ]; then
          t0=$(date +%s.%N)
          KOPT_GPU_SUITE_DIR=/tmp/suite$g bash scripts/gpu_suite.sh "$t" "$e" </dev/null >"/tmp/suite_${g}_$n.log" 2>&1
          rc=$?
          printf '%-28s gpu%d exit %3d %7.1f s\n' "$t $e" "$g" "$rc" "$(python3 -c "import time;print(time.time()-$t0)")"
          [ $rc -eq 0 ] || [ $rc -eq 77 ] || tail -n 40 "/tmp/suite_${g}_$n.log"
        fi
        n=$((n + 1))
      done <runs/suite_list.txt
    ) >"$OUT/suite_gpu$g.txt" 2>&1 &
  done
  wait
  cat "$OUT"/suite_gpu*.txt
}

suite_ncu_captures() {
  start_check
  local V C T0 T1 T2
  V=$(ncu --version | grep -o 'Version [0-9.]*' | cut -d' ' -f2)
  C=$OUT/cap; mkdir -p "$C"
  nvcc -arch=sm_90 -O3 -lineinfo -o /tmp/twok tests/data/profile/ncu-2025.3.1/twok.cu && /tmp/twok
  T0=$(date +%s.%N)
  ncu --clock-control none --profile-from-start off --section SpeedOfLight --section LaunchStats --section Occupancy -o "$C/pass1" -f /tmp/twok
  T1=$(date +%s.%N)
  ncu --clock-control none --profile-from-start off --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy --section SpeedOfLight \
    -o "$C/pass2" -f /tmp/twok
  T2=$(date +%s.%N)
  echo "pass1 $(echo "$T1-$T0" | bc) s, pass2 $(echo "$T2-$T1" | bc) s"
  for p in pass1 pass2; do
    ncu --import "$C/$p.ncu-rep" --csv --page raw >"$C/${p}_raw.csv"
    ncu --import "$C/$p.ncu-rep" --csv --page details >"$C/${p}_details.csv"
  done
  ncu --import "$C/pass2.ncu-rep" --csv --page details --print-details all >"$C/pass2_details_all.csv" 2>&1 || true
  ncu --query-metrics --chip gh100 >"$C/query_metrics_gh100.txt" 2>&1
  ncu --list-sections >"$C/list_sections.txt" 2>&1
  echo "$V" >"$C/ncu_version.txt"
  (cd "$OUT" && tar czf "ncu-$V-captures.tgz" cap && rm -rf cap)
}

suite_ceilings() {
  start_check
  step ceilings 170 "$K" roofline --ceilings-only --remeasure --json "$OUT/ceilings.json" --svg "$OUT/ceilings.svg"
}

# The example table's commands (docs/PERFORMANCE.md, "Per-example results").
example_cmd() {
  case "$1" in
    vector_add) echo "optimize examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864" ;;
    vector_add_float4) echo "optimize examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=67108864 -DKOPT_VECTORIZED_ACCESS=1 -DITEMS=4 --measure-budget-s 1" ;;
    sgemm_naive) echo "bench examples/sgemm_naive/kernel.cu --ref examples/sgemm_naive/ref.py --M=4096 --N=4096 --K=4096 --measure-budget-s 1" ;;
    sgemm_tunable) echo "optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 --measure-budget-s 1" ;;
    softmax) echo "optimize examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=16384 --cols=4096 --iterations 2 --measure-budget-s 1" ;;
    reduction) echo "optimize examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=67108864 --iterations 2 --measure-budget-s 1" ;;
    transpose) echo "optimize examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=8192 --cols=8192 --measure-budget-s 1" ;;
    triton_softmax) echo "optimize examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=8192 --n_cols=4096 --iterations 2 --branches 3 --measure-budget-s 1" ;;
    cutlass_gemm) echo "optimize examples/cutlass_gemm/kernel.cu --ref examples/cutlass_gemm/ref.py --M=4096 --N=4096 --K=4096 --iterations 1 --branches 2" ;;
    *) return 1 ;;
  esac
}

suite_examples() {
  local names="${*:-vector_add vector_add_float4 sgemm_tunable softmax reduction transpose triton_softmax}" e cmd
  for e in $names; do example_cmd "$e" >/dev/null || { echo "examples: unknown example '$e'" >&2; return 2; }; done
  start_check
  if [[ " $names " == *" cutlass_gemm "* ]]; then
    export CUTLASS_PATH=$PWD/.carry/cutlass
    [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  fi
  for e in $names; do
    cmd=$(example_cmd "$e")
    # shellcheck disable=SC2086  # the command is a list of words
    step "$e" "${EXAMPLE_LIMIT_S:-400}" "$K" $cmd --out-dir "runs/$e" </dev/null >"runs/$e.log" 2>&1
    tail -8 "runs/$e.log"; summ "$e"
  done
}

suite_resume() {
  start_check
  local R
  step resume_start 95 timeout -s INT 75 "$K" optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py \
    --M=2048 --N=2048 --K=2048 --iterations 2 --measure-budget-s 0.5 --out-dir runs/resume
  R=$(newest_run resume)
  python3 -c "import json;s=json.load(open('$R/state.json'));print('after the interrupt: iterations_done',s['iterations_done'],'gates_passed',s['gates_passed'],'stop_reason',repr(s['stop_reason']))"
  step resume 200 "$K" optimize --resume "$R" --quiet
  python3 -c "import json;s=json.load(open('$R/summary.json'));print('resumed run:',s['stop'],s['headline'])"
  summ resume
}

suite_timing() {
  case "${1:-}" in
    "") bash "$HERE/timing_check.sh" ;;
    quick) TIMING_QUICK=1 bash "$HERE/timing_check.sh" ;;
    no-tests) TIMING_NO_TESTS=1 bash "$HERE/timing_check.sh" ;;
    *) echo "timing: quick or no-tests" >&2; return 2 ;;
  esac
}

# flush_probe NAME LIB KERNEL REF KERNEL_REGEX ARGS...: kopt bench for the golden data, kopt's runner on the same
# library under each cold flush (KOPT_L2_FLUSH x KOPT_CODE_FLUSH), and Nsight Compute around 25 calls with its own
# cache control and with it off after each of kopt's flushes. Medians per series.
flush_probe() {
  local name=$1 lib=.carry/timing/$2.so kernel=$3 ref=$4 kre=$5; shift 5
  local W=runs/flush G f c cc fl
  local SBS="python3 scripts/device/timing_side_by_side.py"
  local NCU; NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
  mkdir -p "$W" runs/json/flush
  step "kopt bench $name" 100 "$K" bench "$kernel" --ref "$ref" "$@" --seeds 1 --no-reference-timing --measure-budget-s 2 \
    --json "$W/$name.bench.json" --out-dir "$W/$name" >"$W/$name.bench.log" 2>&1
  G=$(ls -d "$W/$name"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
  [ -n "$G" ] && [ -f "$lib" ] || { echo "no golden data or no $lib"; tail -5 "$W/$name.bench.log"; return; }
  for f in memset_then_read memset_then_discard memset; do
    for c in 0 1; do
      KOPT_L2_FLUSH=$f KOPT_CODE_FLUSH=$c timeout 90 "$K" __runner --lib "$lib" --golden "$G" \
        --out "$W/$name.$f.code$c.runner.json" --mode time --max-time-s 2 >/dev/null 2>&1
      python3 -c "import json,statistics as s,sys; r=json.load(open(sys.argv[1])); print('KOPT %s %s code=%s median %.3f us n %d robust_cv %.4f' % (sys.argv[2], sys.argv[3], sys.argv[4], s.median(r['samples_ms'])*1e3, len(r['samples_ms']), r['timing'].get('robust_cv',-1)))" \
        "$W/$name.$f.code$c.runner.json" "$name" "$f" "$c"
    done
  done
  for f in all memset_then_read memset_then_discard memset; do
    cc=none fl=$f
    [ "$f" = all ] && cc=all fl=none
    timeout 120 "$NCU" --profile-from-start off --clock-control none --cache-control $cc --kernel-name "regex:$kre" \
      --metrics gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second --csv --print-units base \
      --log-file "$W/$name.ncu_$f.csv" $SBS calls --lib "$lib" --golden "$G" --calls "${FLUSH_CALLS:-25}" --flush "$fl" >/dev/null 2>&1
    $SBS ncu-clocks --ncu "$W/$name.ncu_$f.csv" --name "${name}_ncu_$f"
  done
  cp "$W"/*.json "$W"/*.csv runs/json/flush/ 2>/dev/null
}

suite_flushes() {
  local k TK=scripts/device/timing_kernels
  for k in ${*:-softmax axpb_4m axpb_1m}; do
    case "$k" in softmax|axpb_4m|axpb_1m) ;; *) echo "flushes: softmax, axpb_4m or axpb_1m" >&2; return 2 ;; esac
  done
  start_check
  for k in ${*:-softmax axpb_4m axpb_1m}; do
    case "$k" in
      softmax) flush_probe softmax softmax examples/softmax/kernel.cu examples/softmax/ref.py softmax_rows --rows=4096 --cols=1024 ;;
      axpb_4m) flush_probe axpb_4m axpb $TK/axpb/kernel.cu $TK/axpb/ref.py axpb --n=4194304 ;;
      axpb_1m) flush_probe axpb_1m axpb $TK/axpb/kernel.cu $TK/axpb/ref.py axpb --n=1048576 ;;
    esac
  done
}

suite_softmax_sizes() {
  start_check
  local W=runs/scale rows n G
  local SBS="python3 scripts/device/timing_side_by_side.py"
  local NCU; NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo ncu)
  mkdir -p "$W" runs/json/scale
  for rows in 4096 16384 65536; do
    n=softmax_$rows
    step "kopt bench $n" 120 "$K" bench examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=$rows --cols=1024 \
      --seeds 1 --no-reference-timing --measure-budget-s 2 --json "$W/$n.bench.json" --out-dir "$W/$n" >"$W/$n.log" 2>&1
    python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; t=o['timing']; ti=o['details'].get('timing_info',{}); print('KOPT %s: gpu_ms median %.5f robust_cv %.4f clock %s event %.5f flush %s' % (sys.argv[2], t['median_ms'], t.get('robust_cv',-1), ti.get('gpu_clock'), ti.get('event_median_ms') or -1, ti.get('l2_flush')))" "$W/$n.bench.json" "$n" || tail -5 "$W/$n.log"
    G=$(ls -d "$W/$n"/kopt_runs/bench_*/golden 2>/dev/null | head -1)
    [ -n "$G" ] || continue
    timeout 120 "$NCU" --profile-from-start off --clock-control none --cache-control all --kernel-name regex:softmax_rows \
      --metrics gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second --csv --print-units base \
      --log-file "$W/$n.ncu.csv" $SBS calls --lib .carry/timing/softmax.so --golden "$G" --calls 25 >/dev/null
    $SBS ncu-clocks --ncu "$W/$n.ncu.csv" --name "$n"
    cp "$W/$n.bench.json" "$W/$n.ncu.csv" runs/json/scale/ 2>/dev/null
    rm -rf "$W/$n/kopt_runs"/bench_*/golden
  done
}

suite_call_ms() {
  start_check
  local W=runs/call TK=scripts/device/timing_kernels n
  mkdir -p "$W" runs/json/call
  call_bench() {
    local name=$1 tag=$2; shift 2
    "$K" bench "$@" --seeds 1 --no-reference-timing --measure-budget-s 2 --json "$W/$name.$tag.json" --out-dir "$W/$name" >"$W/$name.$tag.log" 2>&1
    python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; ti=o['details'].get('timing_info',{}); print('KOPT %s %s: gpu_ms %.5f call_ms %.5f clock %s cupti_missing %s' % (sys.argv[2], sys.argv[3], o['timing']['median_ms'], o['call']['median_ms'], ti.get('gpu_clock'), ti.get('cupti_missing')))" "$W/$name.$tag.json" "$name" "$tag" || tail -3 "$W/$name.$tag.log"
  }
  for n in 1048576 4194304; do
    call_bench axpb_$n clock $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=$n
    KOPT_CUPTI=0 call_bench axpb_$n events $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=$n
    # Which part of a call sample carries the kernel clock's cost: without fresh inputs (issue 40) too.
    KOPT_FRESH_INPUTS=0 call_bench axpb_$n clock_nofresh $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=$n
    KOPT_FRESH_INPUTS=0 KOPT_CUPTI=0 call_bench axpb_$n events_nofresh $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=$n
  done
  call_bench softmax clock examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=4096 --cols=1024
  KOPT_CUPTI=0 call_bench softmax events examples/softmax/kernel.cu --ref examples/softmax/ref.py --rows=4096 --cols=1024
  cp "$W"/*.json runs/json/call/ 2>/dev/null
  step "kernel-clock GPU tests" 200 .carry/build/kopt_tests \
    --gtest_filter='RunnerGpu.CallSamples*:RunnerGpu.TheKernelClock*:RunnerGpu.KoptCupti0*:RunnerGpu.PairedModeKeeps*:RunnerGpu.TheDiscard*:Cupti*' 2>&1 \
    | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) |call_ms|^\[==========\]|Failure|Expected|Which is" | tail -30
}

suite_triton_overhead() {
  start_check
  local r
  for r in ${*:-2048 8192}; do triton_overhead "$r"; done
}

sweep_dims() {
  case "$1" in
    sgemm|sgemm_tunable) echo "sgemm_tunable --M=4096 --N=4096 --K=4096" ;;
    transpose) echo "transpose --rows=8192 --cols=8192" ;;
    reduction) echo "reduction --n=67108864" ;;
    *) return 1 ;;
  esac
}

# sweep KERNEL: search_efficiency.sh over the example's declared space into runs/se_NAME; its table, report and costs to $OUT.
sweep() {
  local spec name dims
  spec=$(sweep_dims "$1") || return 2
  name=${spec%% *} dims=${spec#* }
  step "sweep $name" 300 bash scripts/perf/search_efficiency.sh --kernel "examples/$name/kernel.cu" --dims "$dims" \
    --jobs "$(nproc)" --out "runs/se_$name" 2>&1 | tail -25
  cp "runs/se_$name/report.txt" "runs/se_$name/measurements.csv" "runs/se_$name/costs.csv" "$OUT/" 2>/dev/null
}

suite_search_efficiency() {
  sweep_dims "${1:-sgemm}" >/dev/null || { echo "search-efficiency: sgemm_tunable, transpose or reduction" >&2; return 2; }
  start_check
  sweep "${1:-sgemm}"
}

suite_seeds() {
  local a; a=$(seeds_args "${1:-}") || { echo "seeds: KERNEL is sgemm, transpose or reduction" >&2; return 2; }
  start_check
  # shellcheck disable=SC2086
  set -- "$1" "${2:-1 2 3 4 5}" $a
  local name=$1 seeds=$2 best=$3 budget=$4; shift 4
  seed_runs "$name" "${SEEDS_BUDGET:-$budget}" "$best" "$seeds" -- "$@"
}

suite_sweep_seeds() {
  local spec; spec=$(sweep_dims "${1:-}") || { echo "sweep-seeds: KERNEL is sgemm, transpose or reduction" >&2; return 2; }
  start_check
  local name=${spec%% *} dims=${spec#* } seeds=${2:-1 2 3 4 5} best budget
  sweep "$1"
  [ -f "runs/se_$name/report.txt" ] && [ -f "runs/se_$name/measurements.csv" ] || { echo "no sweep: nothing to compare with"; return 1; }
  read -r best budget < <(python3 - "runs/se_$name/report.txt" "runs/se_$name/measurements.csv" <<'PY'
import csv, math, re, sys
stages = re.search(r"stages: compile (\d+) s, golden data (\d+) s, measurement (\d+) s", open(sys.argv[1]).read())
wall = sum(int(x) for x in stages.groups())
best = min(float(r["median_ms"]) for r in csv.DictReader(open(sys.argv[2])) if r["status"] == "ok")
print(best, max(1, math.ceil(0.25 * wall)))
PY
  )
  echo "sweep best $best ms; the budget, 25% of the sweep's wall: $budget s"
  # shellcheck disable=SC2086
  seed_runs "$name" "$budget" "$best" "$seeds" -- "examples/$name/kernel.cu" --ref "examples/$name/ref.py" $dims
  python3 scripts/perf/peers.py kopt-runs runs/${name}_seed*/ --table "runs/se_$name/measurements.csv" \
    --out "$OUT/kopt_live_$name.json" 2>&1 | tail -7
}

suite_kt_live() {
  start_check
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  python3 -c 'import kernel_tuner, scipy, sklearn; print("kernel_tuner", kernel_tuner.__version__, "scipy", scipy.__version__, "sklearn", sklearn.__version__)'
  mkdir -p runs/kt
  local r st seed
  for r in ${*:-random_sample:1 genetic_algorithm:1 bayes_opt:1}; do
    st=${r%%:*} seed=${r##*:}
    step "kt live $st seed $seed" "${KT_LIMIT_S:-120}" python3 scripts/perf/kt_sgemm.py --strategy "$st" --seed "$seed" \
      --max-fevals "${KT_FEVALS:-60}" --cache "runs/kt/kt_${st}_s${seed}_cache.json" --out "runs/kt/kt_${st}_s$seed.json" 2>&1 | tail -4
    tar czf "$OUT/kt_live.tgz" -C runs kt 2>/dev/null
  done
}

suite_plain() {
  plain_in "${PLAIN_LIMIT_S:-560}" "$@"
}

suite_gates() {
  if [ $# -gt 0 ]; then GATES_RUNS="$*" bash "$HERE/gates_check.sh"; else bash "$HERE/gates_check.sh"; fi
}

suite_multi_gpu() {
  start_check
  local VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216 --time-budget 15 --iterations 1 --branches 4 --measure-budget-s 0.5 --seeds 2" D
  # shellcheck disable=SC2086
  step "optimize va --gpus 0,1" 60 "$K" optimize $VA --gpus 0,1 --out-dir runs/va_gpus01 </dev/null >"$OUT/optimize_va_gpus01.log" 2>&1
  tail -4 "$OUT/optimize_va_gpus01.log"
  # shellcheck disable=SC2086
  step "optimize va --gpus all" 200 "$K" optimize $VA --gpus all --out-dir runs/va_gpus_all </dev/null >"$OUT/optimize_va_gpus_all.log" 2>&1
  tail -22 "$OUT/optimize_va_gpus_all.log"
  D=$(newest_run va_gpus_all)
  [ -n "$D" ] && python3 -c "import json;s=json.load(open('$D/state.json'));print('measuring', json.dumps(s.get('measuring')))"
  summ va_gpus_all
}

suite_corpus() {
  start_check
  export CUTLASS_PATH=$PWD/.carry/cutlass
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  local names=("$@") d k typical flags
  [ ${#names[@]} -gt 0 ] || names=($(ls examples/corpus | grep -v README))
  for n in "${names[@]}"; do
    d=examples/corpus/$n
    k=$(corpus_kernel "$n")
    [ -n "$k" ] || { echo "corpus: no kernel in $d"; continue; }
    typical=$(corpus_dims "$n" typical)
    flags=$(corpus_dims "$n" flags)
    step "bench $n" 180 "$K" bench "$k" --ref $d/ref.py $typical $flags --measure-budget-s 1 --out-dir runs/corpus_$n \
      --json runs/json/corpus_$n.json 2>&1 | grep -E "=== |=>|kernel  |floor|REJECTED|FLAGGED|reference  |error" | head -8
  done
}

# Issue 35's "no run measures zero candidates", on corpus kernels that have no sweep to hold them to (nothing to
# derive, or a space too large): each one's stamped log, state.json and summary.md in $OUT (co_NAME*), and its line
# (scripts/perf/ttr_summary.py: the candidates measured, the champion against the baseline, the walls).
suite_corpus_optimize() {
  [ $# -gt 0 ] || { echo "corpus-optimize: name the kernels (examples/corpus/NAME, optionally NAME:CAP_SECONDS)" >&2; return 2; }
  local a n cap d k typical flags run
  for a in "$@"; do
    n=${a%%:*}; cap=${a#*:}
    [ -f "examples/corpus/$n/dims.txt" ] || { echo "corpus-optimize: no examples/corpus/$n/dims.txt" >&2; return 2; }
    [ "$cap" = "$a" ] || [[ "$cap" =~ ^[0-9]+$ ]] || { echo "corpus-optimize: $a: the cap is whole seconds" >&2; return 2; }
  done
  start_check
  export CUTLASS_PATH=$PWD/.carry/cutlass KOPT_DATA_DIR=${KOPT_DATA_DIR:-$PWD/data}
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  export -f stamp
  for a in "$@"; do
    n=${a%%:*}; cap=${a#*:}; [ "$cap" = "$a" ] && cap=${CO_CAP_S:-110}
    d=examples/corpus/$n
    k=$(corpus_kernel "$n")
    typical=$(corpus_dims "$n" typical)
    flags=$(corpus_dims "$n" flags)
    step "co_$n" $((cap + 15)) bash -c "timeout -s INT $cap $K optimize $k --ref $d/ref.py $typical $flags \
      $([ "${CO_BUDGET_S:-20}" = none ] || echo --time-budget "${CO_BUDGET_S:-20}") --out-dir runs/co_$n </dev/null 2>&1 | stamp >$OUT/co_$n.log"
    run=$(newest_run co_$n)
    [ -n "$run" ] || { echo "co_$n: no run directory (its log: $OUT/co_$n.log)"; continue; }
    cp "$run/state.json" "$OUT/co_${n}_state.json" 2>/dev/null
    cp "$run/summary.md" "$OUT/co_${n}_summary.md" 2>/dev/null
    python3 scripts/perf/ttr_summary.py "$run/state.json" --name "co_$n"
  done
}

# The corpus benchmark (issue 35, item 4): scripts/device/corpus_bench.sh run, under a hard cap (CB_WALL_S, default
# 560 s; its own deadline, CB_DEADLINE_S, stops starting kernels at 470 s). Results: $OUT/corpus_bench.tgz (read
# by scripts/perf/corpus_table.py), $OUT/corpus_table.md.
suite_corpus_bench() {
  bash "$HERE/corpus_bench.sh" check-names "$@" || return 2
  start_check
  export CUTLASS_PATH=$PWD/.carry/cutlass
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  timeout -k 10 "${CB_WALL_S:-560}" bash "$HERE/corpus_bench.sh" run "$@"
}

suite_evidence() {  # the parts as arguments, else EVIDENCE_ONLY's, else all
  EVIDENCE_ONLY="${*:-${EVIDENCE_ONLY:-}}" bash "$HERE/evidence_check.sh"
}

# The warm bench worker (issue 36 item 3, docs/RUNNER.md "The warm bench worker"): vector_add 2^24 first, then three
# second candidates (-DITEMS=2,3,4); sgemm_tunable 4096^3 first, then three tile points; the same second candidates
# with --no-worker; then the hostile kernels through bench with the worker and without, their verdicts compared.
ttr_bench_worker() {
  local i d  # VA and ST: suite_time_to_result's
  step ttr_bw_va_first 150 bash -c "$K bench $VA --out-dir runs/ttr_bwv0 2>&1 | stamp | tail -3"; phases ttr_bwv0
  for i in 2 3 4; do step ttr_bw_va_second_items$i 60 bash -c "$K bench $VA -DITEMS=$i --out-dir runs/ttr_bwv$i 2>&1 | stamp | tail -3"; phases ttr_bwv$i; done
  step ttr_bw_sgemm_first 200 bash -c "$K bench $ST --out-dir runs/ttr_bws0 2>&1 | stamp | tail -3"; phases ttr_bws0
  i=0; for d in "-DBM=128" "-DBN=128 -DTM=8" "-DBM=128 -DBN=128 -DTN=8"; do i=$((i + 1))
    step "ttr_bw_sgemm_second$i($d)" 60 bash -c "$K bench $ST $d --out-dir runs/ttr_bws$i 2>&1 | stamp | tail -3"; phases ttr_bws$i; done
  for i in 2 3 4; do step ttr_bw_va_noworker_items$i 60 bash -c "$K bench $VA -DITEMS=$i --no-worker --out-dir runs/ttr_bwn$i 2>&1 | stamp | tail -3"; phases ttr_bwn$i; done
  step ttr_bw_sgemm_noworker 60 bash -c "$K bench $ST -DBM=128 --no-worker --out-dir runs/ttr_bwns 2>&1 | stamp | tail -3"; phases ttr_bwns
  local k w
  for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread \
           vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key; do
    for w in on off; do
      KOPT_BENCH_WORKER=$w timeout 120 "$K" bench tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 \
        --no-reference-timing --measure-budget-s 1 --json runs/json/bw_${k}_$w.json --out-dir runs/bw_$k >/dev/null 2>&1
      echo "=== hostile $k worker=$w rc=$?"
    done
  done
  python3 - <<'PY'
import json
ks = "vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key".split()
def verdict(k, w):
    try: j = json.load(open(f"runs/json/bw_{k}_{w}.json"))
    except Exception as e: return ("unreadable", str(e)[:40])
    return (j["outcome"].get("status"), ",".join(j.get("flags", [])), (j.get("rejected") or {}).get("rule", ""),
            j.get("warm_worker", {}).get("used"))
same = 0
for k in ks:
    on, off = verdict(k, "on"), verdict(k, "off")
    same += on[:3] == off[:3]
    print(f"hostile {k:28} worker {on}  fresh child {off}  {'SAME' if on[:3] == off[:3] else 'DIFFERENT'}")
print(f"hostile verdicts: {same}/{len(ks)} the same with and without the worker")
PY
  ls -la "${KOPT_CACHE_DIR:-$HOME/.cache/kopt}/bench_worker" 2>/dev/null | tail -5
}

# Whole wall as a user waits for it (issue 36): every stderr line stamped with the seconds since the command's start,
# state.json's phase_seconds, and bench's phase_seconds. The caches are the fresh machine's (cold) on the first run.
suite_time_to_result() {
  start_check
  local parts="${*:-optimize bench sgemm}" VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
  local ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
  local limit=${TTR_OPT_LIMIT_S:-200}
  export -f stamp  # lib.sh's, for the bash -c of each step
  tool_log "$OUT/tools.log"  # each Nsight Compute and compute-sanitizer run's start and seconds
  # ttr_line RUN [BEST_MS]: RUN's state.json into $OUT, and its line (scripts/perf/ttr_summary.py)
  ttr_line() { local d; d=$(newest_run $1 "*_*")
    [ -n "$d" ] || { echo "$1: no run directory"; return; }
    cp "$d/state.json" "$OUT/$1_state.json" 2>/dev/null
    python3 scripts/perf/ttr_summary.py "$d/state.json" --name "$1" ${2:+--best "$2"}; }
  phases() { local d; d=$(newest_run $1 "*_*"); [ -n "$d" ] || return
    mkdir -p runs/json/$1; cp $d/state.json $d/summary.json $d/bench.json $d/holdout.json runs/json/$1/ 2>/dev/null
    python3 -c "import json,sys
for f in ('state.json','summary.json','bench.json'):
  try: d=json.load(open(sys.argv[1]+'/'+f))
  except Exception: continue
  keep=('phase_seconds','wall','wall_s','candidate_costs','measure_phases_ms','measure_startup_ms','measure_request_ms','measure_worker_ms','measure_wall_ms','warm_worker','gpu_info_cached')
  print('phases', sys.argv[2], f, json.dumps({k: d.get(k) for k in keep if k in d}))
  if 'history' in d: print('history', sys.argv[2], len(d['history']), 'measurements;', d.get('iterations_done'), 'iterations; stop', d.get('stop_reason'))
  u=d.get('reuse') if f=='summary.json' else None
  if isinstance(u, dict): print('reuse', sys.argv[2], u.get('evaluations'), 'evaluations:', u.get('reused'), 'reused,', len(u.get('raced_again') or []), 'raced again,', (u.get('evaluations') or 0)-(u.get('reused') or 0)-len(u.get('raced_again') or []), 'new')" "$d" "$1"; }
  local p
  for p in $parts; do case $p in
    optimize)  # each whole stamped log in $OUT/ttr_opt_{cold,warm}.log
      step ttr_opt_cold $limit bash -c "$K optimize $VA --out-dir runs/ttr_opt1 2>&1 | stamp | tee $OUT/ttr_opt_cold.log | tail -70"; phases ttr_opt1
      step ttr_opt_warm $limit bash -c "$K optimize $VA --out-dir runs/ttr_opt2 2>&1 | stamp | tee $OUT/ttr_opt_warm.log | tail -70"; phases ttr_opt2 ;;
    optimize-cold)
      step ttr_opt_cold $limit bash -c "$K optimize $VA --out-dir runs/ttr_opt1 2>&1 | stamp | tee $OUT/ttr_opt_cold.log | tail -70"; phases ttr_opt1 ;;
    bench)
      for b in cold warm; do step ttr_bench_$b 120 bash -c "$K bench $VA --out-dir runs/ttr_bench_$b 2>&1 | stamp | head -40"; phases ttr_bench_$b; done
      for i in 1 2 3; do step ttr_bench_second$i 120 bash -c "$K bench $VA -DITEMS=$((i + 1)) --out-dir runs/ttr_bench_2nd$i 2>&1 | stamp | tail -4"; phases ttr_bench_2nd$i; done ;;
    bench-warm)
      step ttr_bench_first 150 bash -c "$K bench $VA --out-dir runs/ttr_bw0 2>&1 | stamp | tail -2"; phases ttr_bw0
      step ttr_bench_again 60 bash -c "$K bench $VA --out-dir runs/ttr_bw1 2>&1 | stamp | tail -2"; phases ttr_bw1
      for i in 1 2 3; do step ttr_bench_next$i 60 bash -c "$K bench $VA -DITEMS=$((i + 1)) --out-dir runs/ttr_bw2$i 2>&1 | stamp | tail -2"; phases ttr_bw2$i; done
      step ttr_db 30 "$K" db list ;;
    bench-worker) ttr_bench_worker ;;
    corpus-page)
      # A corpus kernel's optimize, one case and one held-out shape, for the run page (docs/img); the run directory
      # without binaries, golden data and reports comes back as $OUT/page_run.tgz.
      local d=examples/corpus/cutlass_rmsnorm
      export CUTLASS_PATH=$PWD/.carry/cutlass
      [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
      printf 'M=4096 N=4096\n' >runs/page_case.txt
      printf 'M=1000 N=4000\n' >runs/page_holdout.txt
      step ttr_corpus_page ${TTR_PAGE_LIMIT_S:-150} bash -c "$K optimize $d/kernel.cu --ref $d/ref.py --M=4096 --N=4096 $(corpus_dims cutlass_rmsnorm flags) --shapes runs/page_case.txt --holdout-shapes runs/page_holdout.txt --time-budget 20 --iterations 2 --out-dir runs/ttr_page 2>&1 | stamp | tail -40"
      phases ttr_page
      (cd runs/ttr_page/kopt_runs && tar czf "$OUT/page_run.tgz" --exclude='*.so' --exclude='*.ncu-rep' --exclude='*.safetensors' --exclude='*.cubin' --exclude='build' .) ;;
    cold)  # every cache cold: TTR_COLD_RUNS (default 2) runs, each over a fresh KOPT_CACHE_DIR with the doctor's cache removed; then one warm
      local i c=""
      for i in $(seq 1 "${TTR_COLD_RUNS:-2}"); do
        c=$PWD/runs/ttr_cache_cold$i; rm -rf "$c" "$HOME/.cache/kopt/doctor"
        KOPT_CACHE_DIR=$c step ttr_cold$i $limit bash -c "$K optimize $VA --out-dir runs/ttr_cold$i </dev/null 2>&1 | stamp >$OUT/ttr_cold$i.log"
        ttr_line ttr_cold$i
      done
      KOPT_CACHE_DIR=$c step ttr_cold_then_warm $limit bash -c "$K optimize $VA --out-dir runs/ttr_cold_warm </dev/null 2>&1 | stamp >$OUT/ttr_cold_warm.log"
      ttr_line ttr_cold_warm ;;
    sgemm-seeds)  # search seeds TTR_SEEDS (default 1-5), each over a fresh cache, cut by SIGINT at TTR_CUT_S (default 47)
      local s best; best=$(seeds_args sgemm | cut -d' ' -f1)
      for s in ${TTR_SEEDS:-1 2 3 4 5}; do
        KOPT_CACHE_DIR=$PWD/runs/ttr_cache_s$s step ttr_sgemm_s$s $((${TTR_CUT_S:-47} + 15)) bash -c "timeout -s INT ${TTR_CUT_S:-47} $K optimize $ST --search-seed $s --out-dir runs/ttr_sgemm_s$s </dev/null 2>&1 | stamp >$OUT/ttr_sgemm_s$s.log"
        ttr_line ttr_sgemm_s$s "$best"
      done ;;
    sgemm)
      step ttr_sgemm ${TTR_SGEMM_LIMIT_S:-300} bash -c "$K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 --out-dir runs/ttr_sgemm 2>&1 | stamp | tail -80"; phases ttr_sgemm ;;
    *) echo "time-to-result: unknown part '$p' (optimize optimize-cold cold bench bench-warm bench-worker corpus-page sgemm sgemm-seeds)" >&2; return 2 ;;
  esac; done
}

# The warm start's done-when (docs/DATABASE.md "Warm start"): run A at n=2^22 over a fresh cache root (the results
# database, compiled binaries, golden data, ceilings: KOPT_CACHE_DIR), then a copy of that root, then run B at n=2^24
# over the root (warm start: A's best configurations lead B's first design) and run B_off at n=2^24 with
# --no-warm-start over the copy, so both start from the same database and caches. Each run under `timeout
# WS_LIMIT_S` (default 170 s), with WS_ARGS (default --time-budget 60) after the example's command. $OUT gets each
# run's log, state.json, summary.md and summary.json (warm_start_{a,b,b_off}_*), and warm_start.txt: per run its
# wall (whole, first candidate, champion crowned), evaluations, the champion, and the evaluation and search second at
# which it first measured a configuration within 3% of the best either second run found.
suite_warm_start() {
  start_check
  local C=$PWD/runs/ws_cache VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py" limit=${WS_LIMIT_S:-170}
  local args=${WS_ARGS:---time-budget 60} r d
  rm -rf "$C" "$C.off" runs/ws_a runs/ws_b runs/ws_b_off
  mkdir -p "$C"
  # shellcheck disable=SC2086  # the commands are lists of words
  KOPT_CACHE_DIR=$C step ws_a "$limit" "$K" optimize $VA --n=4194304 $args --db "$C/results.sqlite3" \
    --out-dir runs/ws_a </dev/null >"$OUT/warm_start_a.log" 2>&1
  tail -3 "$OUT/warm_start_a.log"
  cp -a "$C" "$C.off"
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$C step ws_b "$limit" "$K" optimize $VA --n=16777216 $args --db "$C/results.sqlite3" \
    --out-dir runs/ws_b </dev/null >"$OUT/warm_start_b.log" 2>&1
  tail -3 "$OUT/warm_start_b.log"
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$C.off step ws_b_off "$limit" "$K" optimize $VA --n=16777216 $args --no-warm-start \
    --db "$C.off/results.sqlite3" --out-dir runs/ws_b_off </dev/null >"$OUT/warm_start_b_off.log" 2>&1
  tail -3 "$OUT/warm_start_b_off.log"
  for r in a b b_off; do
    d=$(newest_run ws_$r)
    [ -n "$d" ] || { echo "ws_$r: no run directory"; continue; }
    for f in state.json summary.md summary.json; do cp "$d/$f" "$OUT/warm_start_${r}_$f" 2>/dev/null; done
    grep -h "=== ws_$r rc=" "$OUT/warm_start_$r.log" 2>/dev/null
  done
  python3 - "$OUT" <<'PY' | tee "$OUT/warm_start.txt"
import json, os, sys
out = sys.argv[1]
def load(r):
    try: return json.load(open(os.path.join(out, "warm_start_%s_state.json" % r)))
    except Exception: return None
runs = {r: load(r) for r in ("a", "b", "b_off")}
def times(s): return [m["median_ms"] for m in s["history"] if m["status"] == "ok" and m.get("median_ms") and m["candidate"]["id"] != "baseline"]
best = min([t for r in ("b", "b_off") if runs[r] for t in times(runs[r])] or [0])
print("best either second run measured: %.5f ms; target (within 3%%): %.5f ms" % (best, 1.03 * best))
for r, s in runs.items():
    if not s: print(r, "no state.json"); continue
    w, ch = s.get("wall", {}), s.get("champion") or {}
    n, hit = 0, None
    for m in s["history"]:
        if m["candidate"]["id"] == "baseline": continue
        n += 1
        if r != "a" and hit is None and m["status"] == "ok" and m.get("median_ms") and m["median_ms"] <= 1.03 * best:
            hit = (n, m["candidate"]["id"], m.get("search_s"))
    print("%-6s whole %s s, first candidate %s s, champion crowned %s s; %d evaluations, %d iterations, stop %s; "
          "champion %s %.5f ms; warm-start points %d; within 3%% of the best: %s"
          % (r, w.get("whole_s"), w.get("first_candidate_s"), w.get("champion_s"), n, s.get("iterations_done", 0),
             s.get("stop_reason"), ch.get("candidate", {}).get("id"), ch.get("median_ms") or 0, len(s.get("warm_start", [])),
             "evaluation %d (%s, search %.1f s)" % (hit[0], hit[1], hit[2] or 0) if hit else "never" if r != "a" else "n/a (another shape)"))
PY
  rm -rf "$C.off"
}

# The same decisions (issue 38's "no behaviour change"): each build of .carry/builds.txz (bash scripts/device/pack_builds.sh
# NAME:COMMIT... here: each build's kopt with its own python/, data/ and examples/) runs DEC_KERNELS (default all three) with
# the same search seed, no database, and one cache a pair; then this commit's `kopt compare` names each pair's
# differences (BUILD 1 against 2, 3 against 4, ...). DEC_ONLY_<BUILD>="reduction" limits one build's kernels.
dec_args() {  # dec_args KERNEL -> the optimize's arguments, relative to a build's folder
  case "$1" in
    reduction) echo "examples/reduction/kernel.cu --ref examples/reduction/ref.py --n=16777216 --iterations 2" ;;
    cutlass_gemm) echo "examples/cutlass_gemm/kernel.cu --ref examples/cutlass_gemm/ref.py --M=2048 --N=2048 --K=2048 --iterations 1 --branches 2" ;;
    triton_softmax) echo "examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=4096 --n_cols=4096 --iterations 2 --branches 3" ;;
    *) return 1 ;;
  esac
}

suite_decisions() {
  start_check
  [ -f .carry/builds.txz ] || { echo "decisions: no .carry/builds.txz (bash scripts/device/pack_builds.sh NAME:COMMIT... here)"; return 2; }
  export CUTLASS_PATH=$PWD/.carry/cutlass
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  rm -rf runs/builds && mkdir -p runs/builds && tar xJf .carry/builds.txz -C runs/builds
  local builds=("$@") b k only d kernels=${DEC_KERNELS:-reduction cutlass_gemm triton_softmax}
  [ ${#builds[@]} -gt 0 ] || read -r -a builds <<<"$(cat runs/builds/ORDER)"
  local j
  for ((j = 0; j < ${#builds[@]}; j++)); do
    b=${builds[j]}
    only="DEC_ONLY_$b"
    for k in ${!only:-$kernels}; do
      # The two builds of a pair share kopt's caches (builds, golden data, ceilings, profiles: what they hold is the
      # same bytes whoever made them, so no decision depends on who filled them), the pairs do not.
      # shellcheck disable=SC2046  # the arguments are a list of words
      (cd "runs/builds/$b" && KOPT_DB=off KOPT_CACHE_DIR=$PWD/../cache_$((j / 2)) KOPT_DATA_DIR=$PWD/data KOPT_PYTHON_DIR=$PWD/python step "$b/$k" "${DEC_LIMIT_S:-170}" ./bin/kopt optimize \
        $(dec_args "$k") --search-seed "${DEC_SEED:-7}" --out-dir "runs/$k" </dev/null >"$OUT/decisions_${b}_$k.log" 2>&1)
      grep -E "^=== .* rc=|stopped:|champion:" "$OUT/decisions_${b}_$k.log" | head -4
    done
  done
  local i a c
  for ((i = 0; i + 1 < ${#builds[@]}; i += 2)); do
    a=${builds[i]} c=${builds[i + 1]}
    for k in $kernels; do
      local ra rc_
      ra=$(newest_run "builds/$a/runs/$k")
      rc_=$(newest_run "builds/$c/runs/$k")
      [ -n "$ra" ] && [ -n "$rc_" ] || { echo "decisions $a/$c $k: a run is missing"; continue; }
      echo "=== decisions $k: $a ($(cat runs/builds/$a/COMMIT)) against $c ($(cat runs/builds/$c/COMMIT))"
      "$K" compare "$ra" "$rc_" --json "$OUT/decisions_${a}_${c}_$k.json" 2>&1 | sed -n '/^decisions:/,$p'
    done
  done
  for b in "${builds[@]}"; do
    for d in runs/builds/"$b"/runs/*/kopt_runs/run_*; do
      [ -d "$d" ] && tar czf "$OUT/decisions_${b}_$(basename "$(dirname "$(dirname "$d")")")_run.tgz" -C "$(dirname "$d")" \
        --exclude='*.so' --exclude='*.cubin' --exclude='*.bin' "$(basename "$d")"
    done
  done
}

suites() { usage | sed -n 's/^  \([a-z-]*\) .*/\1/p'; }   # the first word of each row of the table above

main() {
  local suite=${1:-}
  case "$suite" in
    ""|-h|--help|help) usage; [ -n "$suite" ]; return ;;
  esac
  shift
  suites | grep -qx -- "$suite" ||
    { echo "check.sh: unknown suite '$suite' (bash scripts/device/check.sh --help lists them)" >&2; return 2; }
  export OUT="${OUT:-$PWD/check_out}"
  mkdir -p "$OUT"
  . "$HERE/lib.sh"
  . "$HERE/seed_runs.sh"
  local rc
  case "$suite" in
    sanitizer) bash "$HERE/capture_sanitizer.sh" "$@" ;;
    peers) bash "$HERE/peers_check.sh" "$@" ;;
    llm) bash "$HERE/llm_check.sh" "$@" ;;
    report) bash "$HERE/report_check.sh" "$@" ;;
    *) "suite_${suite//-/_}" "$@" ;;
  esac
  rc=$?
  if [ -d runs ]; then
    finish_check >/dev/null
    [ -f "$OUT/runs_json.tgz" ] && mv "$OUT/runs_json.tgz" "$OUT/runs_json_$suite.tgz"
  fi
  return $rc
}

main "$@"
