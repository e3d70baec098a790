#!/usr/bin/env bash
# Device check 31 (prepared 2026-12-01; run 2026-12-02 for transpose, 600 s, cut in seed 5, and reduction, 386 s): issue 16 on another
# example's space, CHECK31_KERNEL = transpose (8192 x 8192) or reduction (n = 2^26). First the exhaustive sweep of
# its declared space (scripts/perf/search_efficiency.sh: every configuration compiled and measured once), whose
# stage times give its wall; then kopt's live seeds (default flags) with a budget of 25% of that wall (the issue's
# target, rounded up to a second), each cut when its held-out shapes start; within 3% of the sweep's best.
# Run there: CHECK31_KERNEL=transpose bash scripts/device/check31.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/seed_runs.sh"
start_check
cat .carry/build/COMMIT
NAME=${CHECK31_KERNEL:-transpose}
case "$NAME" in
  transpose) DIMS="--rows=8192 --cols=8192" ;;
  reduction) DIMS="--n=67108864" ;;
  *) echo "CHECK31_KERNEL: transpose or reduction"; exit 2 ;;
esac
step "sweep $NAME" 240 bash scripts/perf/search_efficiency.sh --kernel "examples/$NAME/kernel.cu" --dims "$DIMS" \
  --jobs "$(nproc)" --out "runs/se_$NAME" 2>&1 | tail -25
REPORT="runs/se_$NAME/report.txt"
TABLE="runs/se_$NAME/measurements.csv"
[ -f "$REPORT" ] && [ -f "$TABLE" ] || { echo "no sweep: nothing to compare with"; finish_check; exit 1; }
cp "$REPORT" "$TABLE" "runs/se_$NAME/costs.csv" "$OUT/" 2>/dev/null
read -r BEST BUDGET < <(python3 - "$REPORT" "$TABLE" <<'PY'
import csv, math, re, sys
stages = re.search(r"stages: compile (\d+) s, golden data (\d+) s, measurement (\d+) s", open(sys.argv[1]).read())
wall = sum(int(x) for x in stages.groups())
best = min(float(r["median_ms"]) for r in csv.DictReader(open(sys.argv[2])) if r["status"] == "ok")
print(best, max(1, math.ceil(0.25 * wall)))
PY
)
echo "sweep best $BEST ms; the budget, 25% of the sweep's wall: $BUDGET s"
# shellcheck disable=SC2086
seed_runs "$NAME" "$BUDGET" "$BEST" "${CHECK31_SEEDS:-1 2 3 4 5}" -- "examples/$NAME/kernel.cu" --ref "examples/$NAME/ref.py" $DIMS
python3 scripts/perf/peers.py kopt-runs runs/${NAME}_seed*/ --table "$TABLE" --out "$OUT/kopt_live_$NAME.json" 2>&1 | tail -7
finish_check
