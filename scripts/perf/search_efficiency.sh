#!/usr/bin/env bash
# Search efficiency (docs/PERFORMANCE.md): measures every configuration of a kernel's search space (by default
# examples/sgemm_tunable's) once on this GPU, so the true best is known, then replays kopt's built-in search against
# that table (`kopt __search-replay`, no GPU) and counts the evaluations it needs to get within 3% of the best.
#
#   scripts/perf/search_efficiency.sh [--size S] [--rounds R] [--chunk C] [--jobs J] [--fix NAME=VALUE ...]
#                                     [--runs N] [--branches B] [--out DIR] [--dry-run] [--compile-only]
#                                     [--kernel K.cu [--ref REF.py] --dims "--NAME=V ..." [--flops F]]
#
#   --size S          M = N = K = S (default 4096, the size of the issue's cuBLAS target; a multiple of 128)
#   --kernel K.cu     another kernel with a declared space (e.g. examples/transpose/kernel.cu); needs --dims, the
#                     dimensions kopt bench takes (e.g. "--rows=8192 --cols=8192"); --ref defaults to the ref.py
#                     beside it; --flops F (FLOP per solve() call) fills the tflops column (default: empty)
#   --rounds R        timing rounds per configuration, >= 5 (default 7): its median_ms is the median of R
#                     samples, each after an L2 flush, interleaved with the other configurations of its chunk
#   --chunk C         configurations per runner process (default 32)
#   --jobs J          parallel compiles (default: the CPU count)
#   --fix NAME=VALUE  pin a param (repeatable): measure a subspace (default: all 496 configurations)
#   --runs N          seeds the replay runs (default 50)
#   --branches B      candidates per iteration in the replay (default 8, as kopt optimize with the built-in generator)
#   --out DIR         where everything goes (default perf_runs/search_efficiency_<time>)
#   --dry-run         enumerate the space and print the plan; no compile, no GPU
#   --compile-only    enumerate and compile (no GPU needed), then stop
#
# Needs: kopt ($KOPT_BIN, else build/kopt, else .carry/build/kopt), nvcc (as kopt finds it), python3 with numpy
# (ref.py's golden data) and a GPU; without a GPU it exits 77 before compiling anything.
#
# Steps: 1. every configuration is compiled in parallel into kopt's build cache with
# `kopt sass --compile-only -D...` (the same compile `kopt bench` does); 2. golden data once, by
# `kopt bench KERNEL --seeds 1` (which also checks and times the default configuration); 3. scripts/perf/
# measure_space.py times all libraries in chunks of C with `kopt __runner --mode paired` (each library first
# checked against the golden output; a wrong one is reported and never timed; a chunk that crashes is retried
# without the library that broke it, or split in halves); 4. search_efficiency.py reports the table and
# `kopt __search-replay` replays the built-in search (policy loop, and the parameter strategy alone, policy free)
# over N seeds.
#
# Outputs in DIR: configs.txt (one configuration per line, -D words), kernel_subspace.cu (the kernel whose
# annotations declare exactly the measured space), compiled/ (per configuration the compile JSON and log),
# bench/ (the golden data's run), runs/ (runner results), measurements.csv (index, one column per dimension,
# status, median_ms, ci95_low_ms, ci95_high_ms, tflops), costs.csv (per configuration: compile_ms, whether the
# build cache served it, measure_ms: its share of the runner processes' wall), failures.txt, replay_loop.json,
# replay_free.json and report.txt (the table's summary, the replays, date, GPU, command and stage times).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KERNEL="$ROOT/examples/sgemm_tunable/kernel.cu"
REF="$ROOT/examples/sgemm_tunable/ref.py"
SIZE=4096
ROUNDS=7
CHUNK=32
RUNS=50
BRANCHES=8
OUT=""
JOBS="$(nproc 2>/dev/null || echo 4)"
DRY_RUN=0
COMPILE_ONLY=0
DIMS=""
FLOPS=""
REF_GIVEN=""
FIX=()
ARGS=("$@")

while [ $# -gt 0 ]; do
  case "$1" in
    --fix) FIX+=(--fix "$2"); shift 2 ;;
    --fix=*) FIX+=(--fix "${1#--fix=}"); shift ;;
    --size) SIZE="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --chunk) CHUNK="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --branches) BRANCHES="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --kernel) KERNEL="$2"; shift 2 ;;
    --ref) REF_GIVEN="$2"; shift 2 ;;
    --dims) DIMS="$2"; shift 2 ;;
    --flops) FLOPS="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    --compile-only) COMPILE_ONLY=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "search_efficiency: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in SIZE ROUNDS CHUNK JOBS RUNS BRANCHES; do
  case "${!v}" in '' | *[!0-9]*) echo "search_efficiency: --$(echo "$v" | tr '[:upper:]' '[:lower:]') must be a positive integer" >&2; exit 2 ;; esac
done
[ -f "$KERNEL" ] || { echo "search_efficiency: no such kernel: $KERNEL" >&2; exit 2; }
KERNEL="$(cd "$(dirname "$KERNEL")" && pwd)/$(basename "$KERNEL")"
if [ -z "$DIMS" ]; then
  if [ "$KERNEL" != "$ROOT/examples/sgemm_tunable/kernel.cu" ]; then
    echo "search_efficiency: --kernel needs --dims (the dimensions kopt bench takes, e.g. \"--rows=8192 --cols=8192\")" >&2; exit 2
  fi
  if [ $((SIZE % 128)) -ne 0 ] || [ "$SIZE" -eq 0 ]; then echo "search_efficiency: --size must be a multiple of 128" >&2; exit 2; fi
  DIMS="--M=$SIZE --N=$SIZE --K=$SIZE"
  FLOPS="${FLOPS:-$((2 * SIZE * SIZE * SIZE))}"
fi
REF="${REF_GIVEN:-$(dirname "$KERNEL")/ref.py}"
[ -f "$REF" ] || { echo "search_efficiency: no reference $REF (give --ref)" >&2; exit 2; }
FLOPS="${FLOPS:-0}"
if [ "$ROUNDS" -lt 5 ]; then echo "search_efficiency: --rounds must be at least 5" >&2; exit 2; fi

KOPT=""
for c in "${KOPT_BIN:-}" "$ROOT/build/kopt" "$ROOT/.carry/build/kopt"; do
  if [ -n "$c" ] && [ -x "$c" ]; then KOPT="$(cd "$(dirname "$c")" && pwd)/$(basename "$c")"; break; fi
done
[ -n "$KOPT" ] || { echo "search_efficiency: kopt not found (set KOPT_BIN or build build/kopt)" >&2; exit 1; }
# A kopt carried without its tree (.carry/build/kopt) finds the method registry here.
export KOPT_DATA_DIR="${KOPT_DATA_DIR:-$ROOT/data}" PYTHONUNBUFFERED=1

OUT="${OUT:-$ROOT/perf_runs/search_efficiency_$(date +%Y%m%d_%H%M%S)}"
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)"
python3 "$ROOT/scripts/perf/kopt_space.py" "$KERNEL" "${FIX[@]}" --narrowed-kernel "$OUT/kernel_subspace.cu" >"$OUT/configs.txt" || exit 1
N=$(wc -l <"$OUT/configs.txt")
ITERATIONS=$(((N + BRANCHES - 1) / BRANCHES))  # enough for a run to measure the whole space
echo "search_efficiency: $N configurations of $(basename "$(dirname "$KERNEL")") (${FIX[*]:-all}) at $DIMS, $ROUNDS rounds each, chunks of $CHUNK"
echo "search_efficiency: $N compiles on $JOBS jobs; replay: $RUNS seeds x up to $ITERATIONS iterations of $BRANCHES"
if [ $DRY_RUN -eq 1 ]; then
  echo "search_efficiency: dry run; configurations in $OUT/configs.txt, kernel in $OUT/kernel_subspace.cu"
  exit 0
fi
have_gpu() {
  [ -e /dev/nvidia0 ] && return 0
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && return 0
  return 1
}
if [ $COMPILE_ONLY -eq 0 ] && ! have_gpu; then
  echo "search_efficiency: no GPU here (no /dev/nvidia0, no nvidia-smi): nothing measured (--dry-run and --compile-only work without one)" >&2
  exit 77
fi

# 1. Compile every configuration, in parallel, into kopt's build cache.
mkdir -p "$OUT/compiled"
echo "search_efficiency: compiling..."
t_compile=$(date +%s)
# shellcheck disable=SC2016  # $0..$3 belong to the inner shell
awk '{print NR - 1 " " $0}' "$OUT/configs.txt" | tr '\n' '\0' | xargs -0 -P "$JOBS" -n 1 sh -c '
  i="${3%% *}"; defines="${3#* }"
  # shellcheck disable=SC2086
  "$0" sass "$1" --compile-only $defines --json "$2/$i.json" >"$2/$i.log" 2>&1 || echo "compile failed: $i: $defines" >&2
' "$KOPT" "$KERNEL" "$OUT/compiled"
t_compile=$(($(date +%s) - t_compile))
n_compiled=$(find "$OUT/compiled" -name '*.json' | wc -l)
echo "search_efficiency: $n_compiled/$N compiled in $t_compile s"
[ $COMPILE_ONLY -eq 1 ] && exit 0

# 2. Golden data, once (one seed), from ref.py; kopt bench also checks and times the default configuration.
echo "search_efficiency: golden data (kopt bench, 1 seed)..."
t_golden=$(date +%s)
rm -rf "$OUT/bench"
# shellcheck disable=SC2086  # DIMS is a list of --NAME=VALUE words
"$KOPT" bench "$KERNEL" --ref "$REF" $DIMS --seeds 1 --no-reference-timing \
  --measure-budget-s 0.5 --out-dir "$OUT/bench" --json "$OUT/bench.json" >"$OUT/bench.log" 2>&1 </dev/null
GOLDEN="$(find "$OUT/bench/kopt_runs" -maxdepth 2 -type d -name golden 2>/dev/null | head -1)"
t_golden=$(($(date +%s) - t_golden))
if [ -z "$GOLDEN" ] || [ ! -f "$GOLDEN/manifest.json" ]; then
  echo "search_efficiency: kopt bench made no golden data; see $OUT/bench.log" >&2
  tail -20 "$OUT/bench.log" >&2
  exit 1
fi
echo "search_efficiency: golden data in $t_golden s: $GOLDEN"

# 3. Time every library, a chunk per runner process.
t_measure=$(date +%s)
python3 "$ROOT/scripts/perf/measure_space.py" --kopt "$KOPT" --golden "$GOLDEN" --configs "$OUT/configs.txt" \
  --compiled "$OUT/compiled" --out "$OUT" --size "$SIZE" --flops "$FLOPS" --chunk "$CHUNK" --rounds "$ROUNDS" || exit 1
t_measure=$(($(date +%s) - t_measure))

# 4. The report: the table, then the replays of the built-in search.
{
  echo "== the measured space (scripts/perf/search_efficiency.py)"
  python3 "$ROOT/scripts/perf/search_efficiency.py" "$OUT/measurements.csv" --kernel "$OUT/kernel_subspace.cu" --within 1,2,3,5
  for policy in loop free; do
    echo
    echo "== replay of kopt's search, policy $policy (kopt __search-replay)"
    "$KOPT" __search-replay --kernel "$OUT/kernel_subspace.cu" --table "$OUT/measurements.csv" --policy "$policy" \
      --runs "$RUNS" --iterations "$ITERATIONS" --branches "$BRANCHES" --within 3 --target-share 20 \
      --json "$OUT/replay_$policy.json" 2>&1
  done
  echo
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "kopt: $KOPT ($("$KOPT" --version 2>/dev/null | head -1))"
  echo "command: scripts/perf/search_efficiency.sh ${ARGS[*]}"
  echo "size: $DIMS; $ROUNDS rounds per configuration, chunks of $CHUNK; $JOBS compile jobs"
  echo "stages: compile $t_compile s, golden data $t_golden s, measurement $t_measure s"
  echo "baseline by kopt bench: $(grep -m1 'kernel     median' "$OUT/bench.log" | sed 's/^ *//')"
} >"$OUT/report.txt"
cat "$OUT/report.txt"
