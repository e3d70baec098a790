# Shared by the device check scripts (source it): step NAME LIMIT_S CMD... runs CMD under `timeout`, printing
# its exit code and seconds; summ RUN prints runs/RUN's optimize summary and copies its summary, options and
# roofline JSON under runs/json/RUN.
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N); echo "=== $name: $*"; timeout $limit "$@"; local rc=$?; echo "=== $name rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; }
summ() { local d; d=$(ls -d runs/$1/kopt_runs/run_* 2>/dev/null | head -1); [ -n "$d" ] || return; echo "--- summary of $1"; cat $d/summary.md 2>/dev/null || cat $d/state.json; mkdir -p runs/json/$1; cp $d/summary.json $d/options.json runs/json/$1/ 2>/dev/null; find $d -name roofline.json | while read -r f; do cp "$f" runs/json/$1/$(echo "${f#$d/}" | tr / _); done; }
