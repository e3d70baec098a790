#!/usr/bin/env bash
# Captures real compute-sanitizer output for the parser of the sanitizer gate (issue 18; src/sanitize/).
# Run from the repository root on the GPU machine (nvidia-h200 is enough), e.g.
#   run: bash scripts/device/capture_sanitizer.sh            (carry .carry/build for the kopt part; optional)
# No kopt is needed for the main part: each kernel of tests/data/sanitize/ is compiled there (nvcc -arch=sm_90
# -lineinfo; binaries already in .carry/sanitize/<name> are used instead when present) and every tool runs on
# it, text and XML. When .carry/build/kopt exists, each kernel also goes through `kopt bench` (golden data at
# n=1000 and the build) and every tool runs on the measuring child `kopt __runner --mode check`, the command the
# gate will sanitize. Everything lands in $OUT/compute-sanitizer-<version>/:
#   version.txt help.txt gpu.txt         compute-sanitizer --version / --help, nvidia-smi
#   standalone/<tool>[_<variant>]/<kernel>.txt   console output (stdout+stderr) and .rc (the exit code)
#   standalone/xml/<tool>/<kernel>.xml   the XML report (+ .console.txt, .rc, .how: the options that worked)
#   kopt/<kernel>/...                    bench output, the golden manifest, and each tool on kopt __runner
#   INDEX.txt                            one line per run: tool variant kernel rc seconds
# Each sanitizer run has a 180 s limit (a hang is recorded as rc=124). The kernels run in parallel.
# PARTS=kopt runs only the kopt part (PARTS=standalone only the standalone one; default both).
set -u
ROOT=$PWD
: "${OUT:?OUT must name the output folder}"
SAN=${KOPT_COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
KOPT=${KOPT_BIN:-$ROOT/.carry/build/kopt}
KERNELS="clean race_shared uninit_shared oob_global_write uninit_global divergent_barrier"
TOOLS="memcheck racecheck synccheck initcheck"
N=1000  # not a multiple of the kernels' 256-wide tile: the tail defects show
PARTS=${PARTS:-standalone,kopt}

date -u
if [ ! -x "$SAN" ]; then echo "compute-sanitizer not found (tried PATH and /usr/local/cuda/bin)"; exit 3; fi
VER=$("$SAN" --version 2>&1 | grep -oE '[0-9]{4}\.[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1)
[ -n "$VER" ] || VER=unknown
D=$OUT/compute-sanitizer-$VER
mkdir -p "$D/standalone" "$D/kopt"
"$SAN" --version >"$D/version.txt" 2>&1
"$SAN" --help >"$D/help.txt" 2>&1
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >"$D/gpu.txt" 2>&1
"$NVCC" --version >"$D/nvcc.txt" 2>&1
echo "compute-sanitizer $VER at $SAN; nvcc $NVCC; kopt ${KOPT}$([ -x "$KOPT" ] || echo ' (absent: standalone only)')"

B=/tmp/kopt_sanitize_build
mkdir -p "$B"
for k in $KERNELS; do
  if [ -x "$ROOT/.carry/sanitize/$k" ]; then
    cp "$ROOT/.carry/sanitize/$k" "$B/$k"
  else
    "$NVCC" -arch=sm_90 -lineinfo -o "$B/$k" "tests/data/sanitize/$k/main.cu" >"$D/standalone/build_$k.txt" 2>&1 || echo "BUILD FAILED: $k"
  fi
  # Without -lineinfo, as kopt builds candidates by default: the reports then have no file:line.
  "$NVCC" -arch=sm_90 -o "$B/${k}_nolineinfo" "tests/data/sanitize/$k/main.cu" >>"$D/standalone/build_$k.txt" 2>&1
done

# one TOOL VARIANT KERNEL DIR CMD...: runs compute-sanitizer --tool TOOL <variant options> CMD, console to
# DIR/KERNEL.txt, exit code to DIR/KERNEL.rc, and a line in INDEX.txt.
one() {
  local tool=$1 variant=$2 k=$3 dir=$4; shift 4
  local opts=()
  case $variant in
    default) ;;
    report_all) opts=(--racecheck-report all) ;;
    report_hazard) opts=(--racecheck-report hazard) ;;
    no_backtrace) opts=(--show-backtrace no) ;;
    track_unused) opts=(--track-unused-memory yes) ;;
  esac
  mkdir -p "$dir"
  local t0; t0=$(date +%s.%N)
  timeout 180 "$SAN" --tool "$tool" "${opts[@]}" --print-limit 100 --error-exitcode 99 "$@" >"$dir/$k.txt" 2>&1
  local rc=$?
  echo "$rc" >"$dir/$k.rc"
  echo "$tool $variant $k rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s" >>"$D/INDEX.txt"
}

# xml TOOL KERNEL DIR CMD...: the XML report as DIR/KERNEL.xml. The option spelling is tried in turn (help.txt
# says which exists); the first that leaves a non-empty file wins and is written to DIR/KERNEL.how.
xml() {
  local tool=$1 k=$2 dir=$3; shift 3
  mkdir -p "$dir"
  local extra=()
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  local how
  for how in "--xml yes --save" "--xml yes --log-file" "--xml --save"; do
    rm -f "$dir/$k.xml"
    # shellcheck disable=SC2086
    timeout 180 "$SAN" --tool "$tool" "${extra[@]}" --print-limit 100 --error-exitcode 99 $how "$dir/$k.xml" "$@" \
      >"$dir/$k.console.txt" 2>&1
    local rc=$?
    echo "$rc" >"$dir/$k.rc"
    if [ -s "$dir/$k.xml" ] && head -c 200 "$dir/$k.xml" | grep -q '<'; then
      echo "$how" >"$dir/$k.how"
      echo "$tool xml $k rc=$rc ($how)" >>"$D/INDEX.txt"
      return
    fi
  done
  echo "$tool xml $k: no XML file from any spelling (see $k.console.txt)" >>"$D/INDEX.txt"
}

standalone() {
  local k=$1 t
  for t in $TOOLS; do one "$t" default "$k" "$D/standalone/$t" "$B/$k" $N; done
  one racecheck report_all "$k" "$D/standalone/racecheck_report_all" "$B/$k" $N
  one racecheck report_hazard "$k" "$D/standalone/racecheck_report_hazard" "$B/$k" $N
  one memcheck default "$k" "$D/standalone/memcheck_nolineinfo" "$B/${k}_nolineinfo" $N
  one racecheck report_all "$k" "$D/standalone/racecheck_nolineinfo" "$B/${k}_nolineinfo" $N
  one memcheck no_backtrace "$k" "$D/standalone/memcheck_no_backtrace" "$B/$k" $N
  one initcheck track_unused "$k" "$D/standalone/initcheck_track_unused" "$B/$k" $N
  # Two calls (uninit_global reads its own stale workspace on the second) and a tile multiple (n = 1024).
  one initcheck default "$k" "$D/standalone/initcheck_two_calls" "$B/$k" $N 2
  one memcheck default "$k" "$D/standalone/memcheck_n1024" "$B/$k" 1024
  for t in $TOOLS; do xml "$t" "$k" "$D/standalone/xml/$t" "$B/$k" $N; done
}

through_kopt() {
  local k=$1 t dir=$D/kopt/$k
  mkdir -p "$dir"
  export KOPT_DATA_DIR=$ROOT/data PYTHONUNBUFFERED=1
  timeout 300 "$KOPT" bench "tests/data/sanitize/$k/kernel.cu" --ref "tests/data/sanitize/$k/ref.py" --n=$N \
    --measure-budget-s 0.2 --no-reference-timing --out-dir "/tmp/kopt_san_runs/$k" >"$dir/bench.txt" 2>&1
  echo "$?" >"$dir/bench.rc"
  local run lib
  run=$(ls -d /tmp/kopt_san_runs/$k/kopt_runs/bench_* 2>/dev/null | head -1)
  lib=$(find "$run/build" -name '*.so' 2>/dev/null | head -1)
  if [ -z "$run" ] || [ -z "$lib" ]; then echo "kopt $k: no run directory or library (see kopt/$k/bench.txt)" >>"$D/INDEX.txt"; return; fi
  cp "$run/golden/manifest.json" "$dir/golden_manifest.json" 2>/dev/null
  cp "$run/result.json" "$dir/bench_result.json" 2>/dev/null
  local child=("$KOPT" __runner --lib "$lib" --golden "$run/golden" --mode check)
  for t in $TOOLS; do
    one "$t" default "$k" "$dir/$t" "${child[@]}" --out "$dir/$t.result.json"
  done
  one racecheck report_all "$k" "$dir/racecheck_report_all" "${child[@]}" --out "$dir/racecheck_report_all.result.json"
  xml memcheck "$k" "$dir/xml_memcheck" "${child[@]}" --out "$dir/xml_memcheck.result.json"
  # Plain check twice, no sanitizer: the material of the determinism check.
  for r in 1 2; do
    timeout 120 "${child[@]}" --out "$dir/plain_check_$r.result.json" >"$dir/plain_check_$r.txt" 2>&1
    echo "$?" >"$dir/plain_check_$r.rc"
  done
}

pids=()
for k in $KERNELS; do
  (
    case $PARTS in *standalone*) standalone "$k" ;; esac
    case $PARTS in *kopt*) if [ -x "$KOPT" ]; then through_kopt "$k"; fi ;; esac
  ) >"$D/log_$k.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
sort "$D/INDEX.txt" -o "$D/INDEX.txt"
cat "$D/INDEX.txt"
for f in "$D/standalone/racecheck/race_shared.txt" "$D/standalone/memcheck/oob_global_write.txt" \
         "$D/kopt/race_shared/racecheck/race_shared.txt" "$D/kopt/oob_global_write/memcheck/oob_global_write.txt"; do
  [ -f "$f" ] && { echo "--- ${f#$D/}:"; head -12 "$f"; }
done
date -u
du -sh "$D"
