#!/usr/bin/env bash
# kopt's GPU end-to-end suite: the real commands on real examples, small settings, checked by exit code and by
# the key lines of their output.
#
#   scripts/gpu_suite.sh TEST EXAMPLE    one test (what `ctest -L gpu` runs), e.g. `bench vector_add`
#   scripts/gpu_suite.sh all             every test in turn, then a summary table (test, exit code, seconds)
#   scripts/gpu_suite.sh list            the tests `all` runs
#
# TEST is bench, bench-tuned, sass, profile, roofline or optimize; EXAMPLE is a folder of examples/ with its sizes
# below (CUDA kernel.cu, Triton kernel.py, CUTLASS). Exit codes: 0 passed, 1 failed, 77 skipped: no GPU here, or
# a CUTLASS test without CUTLASS_PATH (CTest counts 77 as skipped, so plain `ctest` passes on machines without
# one), 2 bad usage. The CTest list is `list`'s output (CMakeLists.txt reads it).
#
# kopt is $KOPT_BIN, else build/kopt under the repository root, else .carry/build/kopt. Each test writes its
# output and its kopt_runs/ under $KOPT_GPU_SUITE_DIR (default: a fresh folder under /tmp), kept for reading.
# KOPT_GPU_SUITE_FORCE=1 runs the tests even where no GPU is seen (`sass` works without one).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

has_gpu() {
  [ "${KOPT_GPU_SUITE_FORCE:-0}" = 1 ] && return 0  # testing the suite itself where the GPU is missing
  [ -e /dev/nvidia0 ] && return 0
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && return 0
  return 1
}

find_kopt() {
  local c
  for c in "${KOPT_BIN:-}" "$ROOT/build/kopt" "$ROOT/.carry/build/kopt"; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

# Dimensions per example: moderate, so each command takes seconds.
dims_of() {
  case "$1" in
    vector_add) echo "--n=16777216" ;;
    sgemm_naive | sgemm_tunable) echo "--M=2048 --N=2048 --K=2048" ;;
    softmax) echo "--rows=4096 --cols=4096" ;;
    reduction) echo "--n=16777216" ;;
    transpose) echo "--rows=4096 --cols=4096" ;;
    triton_softmax) echo "--n_rows=4096 --n_cols=4096" ;;
    triton_matmul) echo "--M=2048 --N=2048 --K=2048" ;;
    cutlass_gemm) echo "--M=2048 --N=2048 --K=2048" ;;
    *) return 1 ;;
  esac
}

# The point of sgemm_tunable's space expected to be fast on an H200 (bench-tuned checks it is also correct).
TUNED_SGEMM="-DBM=128 -DBN=128 -DBK=8 -DTM=8 -DTN=8 -DSTAGES=3 -DKOPT_VECTORIZED_ACCESS=1 -DKOPT_CP_ASYNC_PIPELINE=1 -DKOPT_SMEM_PADDING=1"

ALL_TESTS=(
  "bench vector_add" "bench sgemm_tunable" "bench-tuned sgemm_tunable"
  "bench softmax" "bench reduction" "bench transpose"
  "sass vector_add" "sass sgemm_tunable"
  "roofline vector_add" "roofline sgemm_tunable"
  "profile vector_add" "profile sgemm_tunable"
  "optimize vector_add" "optimize sgemm_tunable"
  "bench triton_softmax" "sass triton_softmax" "profile triton_softmax" "optimize triton_softmax"
  "bench cutlass_gemm" "sass cutlass_gemm" "profile cutlass_gemm" "optimize cutlass_gemm"
)

# expect LOG PATTERN...: every extended regular expression appears in the log.
expect() {
  local log="$1" p
  shift
  for p in "$@"; do
    if ! grep -Eq -- "$p" "$log"; then
      echo "gpu_suite: expected a line matching '$p' in the output" >&2
      return 1
    fi
  done
}

# run_kopt LOG ARGS...: runs kopt, output (stdout and stderr) to LOG; returns kopt's exit code.
run_kopt() {
  local log="$1"
  shift
  echo "+ $KOPT $*" >"$log"
  "$KOPT" "$@" >>"$log" 2>&1
}

# One test; its output goes to $WORK/<test>_<example>/output.txt.
run_test() {
  local test="$1" ex="$2" dims kernel ref dir log rc
  dims="$(dims_of "$ex")" || { echo "gpu_suite: unknown example '$ex'" >&2; return 2; }
  kernel="examples/$ex/kernel.cu"
  [ -f "$ROOT/$kernel" ] || kernel="examples/$ex/kernel.py"  # a Triton example
  ref="examples/$ex/ref.py"
  [ -f "$ROOT/$kernel" ] || { echo "gpu_suite: examples/$ex has no kernel.cu or kernel.py" >&2; return 2; }
  local sass_args=()
  case "$ex" in
    cutlass_*)
      if [ -z "${CUTLASS_PATH:-}" ]; then
        echo "gpu_suite: $test $ex skipped: CUTLASS_PATH is not set (docs/CUTLASS.md)"
        return 77
      fi
      sass_args=(--arch sm_90a)
      ;;
    triton_*) sass_args=($dims) ;;  # kopt sass runs a Triton kernel once to let it compile
  esac
  dir="$WORK/${test}_${ex}"
  mkdir -p "$dir"
  log="$dir/output.txt"
  cd "$ROOT" || return 1
  # shellcheck disable=SC2086  # dims and defines are word lists
  case "$test" in
    bench)
      run_kopt "$log" bench "$kernel" --ref "$ref" $dims --measure-budget-s 1 --out-dir "$dir" --json "$dir/bench.json"
      rc=$?
      [ $rc -eq 0 ] || { echo "gpu_suite: kopt bench exited $rc" >&2; return 1; }
      expect "$log" "=> ok" "kernel +median [0-9.]+ ms" "achieved" || return 1
      python3 - "$dir/bench.json" <<'EOF' || return 1
import json, sys
j = json.load(open(sys.argv[1]))
assert "meta" in j, "bench.json has no meta block"
assert j["outcome"]["status"] == "ok", j["outcome"]["status"]
assert j["outcome"]["timing"]["median_ms"] > 0, "no median"
EOF
      ;;
    bench-tuned)
      [ "$ex" = sgemm_tunable ] || { echo "gpu_suite: bench-tuned is for sgemm_tunable" >&2; return 2; }
      run_kopt "$log" bench "$kernel" --ref "$ref" $dims $TUNED_SGEMM --measure-budget-s 1 --out-dir "$dir"
      rc=$?
      [ $rc -eq 0 ] || { echo "gpu_suite: kopt bench (tuned configuration) exited $rc" >&2; return 1; }
      expect "$log" "=> ok" "achieved +[0-9.]+ TFLOP/s" || return 1
      ;;
    sass)
      if [ "$ex" = sgemm_tunable ]; then
        run_kopt "$log" sass "$kernel" --methods vectorized_access
        rc=$?
        [ $rc -eq 0 ] || { echo "gpu_suite: kopt sass --methods vectorized_access exited $rc" >&2; return 1; }
        expect "$log" "vectorized_access +pass" || return 1
        run_kopt "$dir/cp_async.txt" sass "$kernel" --methods cp_async_pipeline -DSTAGES=3
        rc=$?
        [ $rc -eq 0 ] || { echo "gpu_suite: kopt sass --methods cp_async_pipeline exited $rc" >&2; return 1; }
        expect "$dir/cp_async.txt" "cp_async_pipeline +pass" "LDGSTS" || return 1
      else
        run_kopt "$log" sass "$kernel" "${sass_args[@]}"
        rc=$?
        [ $rc -eq 0 ] || { echo "gpu_suite: kopt sass exited $rc" >&2; return 1; }
        expect "$log" "instructions: [0-9]+" "resources: " || return 1
      fi
      ;;
    roofline)
      run_kopt "$log" roofline "$kernel" --ref "$ref" $dims --out-dir "$dir"
      rc=$?
      [ $rc -eq 0 ] || { echo "gpu_suite: kopt roofline exited $rc" >&2; return 1; }
      expect "$log" "Roofline of" "floor +[0-9.]+ ms" "verdict" || return 1
      ;;
    profile)
      run_kopt "$log" profile "$kernel" --ref "$ref" $dims --out-dir "$dir"
      rc=$?
      [ $rc -eq 0 ] || { echo "gpu_suite: kopt profile exited $rc" >&2; return 1; }
      expect "$log" "Nsight Compute" "binding: " "kernels:" || return 1
      ;;
    optimize)
      run_kopt "$log" optimize "$kernel" --ref "$ref" $dims --iterations 1 --branches 2 --out-dir "$dir"
      rc=$?
      [ $rc -eq 0 ] || { echo "gpu_suite: kopt optimize exited $rc" >&2; return 1; }
      expect "$log" "[Cc]hampion" || return 1
      ls -d "$dir"/kopt_runs/* >/dev/null 2>&1 || { echo "gpu_suite: no run directory under $dir/kopt_runs" >&2; return 1; }
      if [[ "$kernel" == *.py ]]; then
        # A Triton candidate's other cases are checked in its timed child (--also-check), not in check runs of their own.
        python3 - "$dir" <<'PY' || return 1
import glob, json, sys
files = glob.glob(sys.argv[1] + "/kopt_runs/*/iter_*/candidates/*/cases.json")
where = [c.get("checked_in") for f in files for c in json.load(open(f)).get("checks", [])]
if not where or any(w != "the timed run's child" for w in where):
    sys.exit(f"gpu_suite: the Triton candidates' other cases were checked in: {sorted(set(map(str, where)))} ({len(files)} cases.json)")
PY
      fi
      ;;
    *)
      echo "gpu_suite: unknown test '$test' (bench, bench-tuned, sass, roofline, profile, optimize)" >&2
      return 2
      ;;
  esac
  return 0
}

# Runs one test, printing its log's tail when it fails.
one() {
  local rc
  echo "gpu_suite: $1 $2 (output: $WORK/${1}_${2}/output.txt)"
  run_test "$1" "$2"
  rc=$?
  if [ $rc -ne 0 ] && [ -f "$WORK/${1}_${2}/output.txt" ]; then
    echo "---- last lines of $WORK/${1}_${2}/output.txt" >&2
    tail -n 40 "$WORK/${1}_${2}/output.txt" >&2
  fi
  return $rc
}

usage() {
  sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 1 ] || usage
case "$1" in
  list)
    printf '%s\n' "${ALL_TESTS[@]}"
    exit 0
    ;;
  -h | --help) usage ;;
esac

if ! has_gpu; then
  echo "gpu_suite: no GPU here (no /dev/nvidia0, no nvidia-smi): skipped"
  exit 77
fi
KOPT="$(find_kopt)" || {
  echo "gpu_suite: kopt not found: set KOPT_BIN, or build it into build/kopt (scripts/setup.sh)" >&2
  exit 1
}
WORK="${KOPT_GPU_SUITE_DIR:-$(mktemp -d /tmp/kopt-gpu-suite.XXXXXX)}"
mkdir -p "$WORK"

if [ "$1" = all ]; then
  results=()
  failed=0
  skipped=0
  for t in "${ALL_TESTS[@]}"; do
    # shellcheck disable=SC2086
    set -- $t
    start=$(date +%s.%N)
    one "$1" "$2"
    rc=$?
    secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
    results+=("$(printf '%-28s %4d %9s' "$1 $2" "$rc" "$secs")")
    if [ $rc -eq 77 ]; then skipped=$((skipped + 1)); elif [ $rc -ne 0 ]; then failed=$((failed + 1)); fi
  done
  echo
  echo "kopt GPU suite: $KOPT on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf '%-28s %4s %9s\n' "test" "exit" "seconds"
  printf '%s\n' "${results[@]}"
  echo "$((${#ALL_TESTS[@]} - failed - skipped)) passed, $skipped skipped, $failed failed; outputs in $WORK"
  [ $failed -eq 0 ] && exit 0 || exit 1
fi

[ $# -eq 2 ] || usage
one "$1" "$2"
rc=$?
[ $rc -eq 0 ] && echo "gpu_suite: $1 $2 passed"
exit $rc
