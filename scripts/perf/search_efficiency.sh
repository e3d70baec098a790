#!/usr/bin/env bash
# Measures every configuration of examples/sgemm_tunable's search space once on this GPU, so the true best is
# known, then reports it (scripts/perf/search_efficiency.py). With the order in which `kopt optimize` measured
# its candidates (--evaluated), the report also says after how many evaluations kopt's search reached the best.
#
#   scripts/perf/search_efficiency.sh [--fix NAME=VALUE ...] [--all] [--size S] [--max-time-s T] [--out DIR]
#                                     [--jobs J] [--dry-run]
#
#   --fix NAME=VALUE  pin a param (repeatable). Without any --fix (and without --all) the space is narrowed to
#                     TM=8 TN=8 BM=128: 60 configurations, about 4 minutes on an H200. --all measures all 496.
#   --size S          M = N = K = S (default 2048: one call is 17 GFLOP, ~0.3-3 ms)
#   --max-time-s T    timing budget per configuration (default 0.5); each configuration is checked on 1 seed
#   --out DIR         where everything goes (default perf_runs/search_efficiency_<time>)
#   --jobs J          parallel compiles (default: the CPU count)
#   --dry-run         enumerate and write the narrowed kernel, measure nothing
#
# Outputs in DIR: configs.txt (one configuration per line, -D words), measurements.csv (one row per
# configuration: its values, status, median_ms, ci95_low_ms, ci95_high_ms, tflops), kernel_subspace.cu (the kernel
# whose annotations declare exactly the measured space), report.txt. To compare with kopt's search, run it on the
# same space and size, then give the order of its candidates to the report:
#
#   build/kopt optimize DIR/kernel_subspace.cu --ref examples/sgemm_tunable/ref.py --M=2048 --N=2048 --K=2048 ...
#   python3 scripts/perf/search_efficiency.py DIR/measurements.csv --kernel DIR/kernel_subspace.cu \
#       --evaluated EVALUATED.txt
#
# EVALUATED.txt: one measured candidate per line, in order, as NAME=VALUE (or -DNAME=VALUE) words of its defines.
# Each configuration costs a `kopt bench` (golden data from ref.py, then correctness and timing); compiles are
# done first, in parallel, into kopt's build cache (`kopt sass` compiles exactly what `kopt bench` does).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KERNEL="$ROOT/examples/sgemm_tunable/kernel.cu"
REF="$ROOT/examples/sgemm_tunable/ref.py"
SIZE=2048
MAX_TIME_S=0.5
OUT=""
JOBS="$(nproc 2>/dev/null || echo 4)"
DRY_RUN=0
ALL=0
FIX=()

while [ $# -gt 0 ]; do
  case "$1" in
    --fix) FIX+=(--fix "$2"); shift 2 ;;
    --fix=*) FIX+=(--fix "${1#--fix=}"); shift ;;
    --all) ALL=1; shift ;;
    --size) SIZE="$2"; shift 2 ;;
    --max-time-s) MAX_TIME_S="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "search_efficiency: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ ${#FIX[@]} -eq 0 ] && [ $ALL -eq 0 ]; then FIX=(--fix TM=8 --fix TN=8 --fix BM=128); fi
if [ $((SIZE % 128)) -ne 0 ]; then echo "search_efficiency: --size must be a multiple of 128" >&2; exit 2; fi

KOPT=""
for c in "${KOPT_BIN:-}" "$ROOT/build/kopt" "$ROOT/.carry/build/kopt"; do
  if [ -n "$c" ] && [ -x "$c" ]; then KOPT="$c"; break; fi
done
[ -n "$KOPT" ] || { echo "search_efficiency: kopt not found (set KOPT_BIN or build build/kopt)" >&2; exit 1; }

OUT="${OUT:-$ROOT/perf_runs/search_efficiency_$(date +%Y%m%d_%H%M%S)}"
mkdir -p "$OUT/json"
python3 "$ROOT/scripts/perf/kopt_space.py" "$KERNEL" "${FIX[@]}" --narrowed-kernel "$OUT/kernel_subspace.cu" >"$OUT/configs.txt" || exit 1
N=$(wc -l <"$OUT/configs.txt")
echo "search_efficiency: $N configurations (${FIX[*]:-all}) at M=N=K=$SIZE; about $((N * 4 / 60 + 1)) min on an H200"
echo "search_efficiency: narrowed kernel for kopt optimize: $OUT/kernel_subspace.cu"
[ $DRY_RUN -eq 1 ] && exit 0

# 1. Compile everything first, in parallel (the build cache makes the benches' compiles hits).
echo "search_efficiency: compiling $N configurations with $JOBS jobs..."
start=$(date +%s)
# shellcheck disable=SC2016  # $0 and $1 belong to the inner shell
tr '\n' '\0' <"$OUT/configs.txt" | xargs -0 -P "$JOBS" -I{} sh -c '"$0" sass "$1" {} >/dev/null 2>&1 || echo "compile failed: {}" >&2' "$KOPT" "$KERNEL"
echo "search_efficiency: compiled in $(($(date +%s) - start)) s"

# 2. Measure one at a time.
header="$(head -1 "$OUT/configs.txt" | tr ' ' '\n' | sed 's/^-D//; s/=.*//' | paste -sd, -)"
echo "index,$header,status,median_ms,ci95_low_ms,ci95_high_ms,tflops" >"$OUT/measurements.csv"
i=0
start=$(date +%s)
while IFS= read -r defines; do
  runs="$OUT/runs_tmp"
  rm -rf "$runs"
  # shellcheck disable=SC2086  # defines is a word list
  "$KOPT" bench "$KERNEL" --ref "$REF" --M="$SIZE" --N="$SIZE" --K="$SIZE" $defines --seeds 1 \
    --max-time-s "$MAX_TIME_S" --no-reference-timing --out "$runs" --json "$OUT/json/$i.json" \
    >"$OUT/json/$i.log" 2>&1 </dev/null
  values="$(echo "$defines" | tr ' ' '\n' | sed 's/^-D[A-Za-z0-9_]*=//' | paste -sd, -)"
  row="$(python3 - "$OUT/json/$i.json" "$SIZE" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("failed,,,,")
    sys.exit()
o, s = j.get("outcome", {}), int(sys.argv[2])
t = o.get("timing") or {}
if "median_ms" in t:
    print(f"{o.get('status')},{t['median_ms']:.6f},{t['ci95_low_ms']:.6f},{t['ci95_high_ms']:.6f},"
          f"{2 * s**3 / (t['median_ms'] * 1e-3) / 1e12:.3f}")
else:
    print(f"{o.get('status', 'failed')},,,,")
EOF
)"
  echo "$i,$values,$row" >>"$OUT/measurements.csv"
  i=$((i + 1))
  elapsed=$(($(date +%s) - start))
  printf '\rsearch_efficiency: measured %d/%d (%d s, %s)   ' "$i" "$N" "$elapsed" "${row%%,*}"
done <"$OUT/configs.txt"
rm -rf "$OUT/runs_tmp"
echo

# 3. The report.
python3 "$ROOT/scripts/perf/search_efficiency.py" "$OUT/measurements.csv" --kernel "$OUT/kernel_subspace.cu" | tee "$OUT/report.txt"
{
  echo
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "kopt: $KOPT ($("$KOPT" --version 2>/dev/null | head -1))"
  echo "command: scripts/perf/search_efficiency.sh ${FIX[*]:---all} --size $SIZE --max-time-s $MAX_TIME_S"
} | tee -a "$OUT/report.txt"
