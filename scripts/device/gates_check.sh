#!/usr/bin/env bash
# Device check of issue 18's shapes and safety gates (docs/GATES.md), one H200, under 8 minutes (GATES_RUNS picks):
#  va      vector_add 2^24, the default workload matrix (3 cases), the sanitizer on the baseline and the finalists,
#          determinism, the held-out shapes;
#  tr      transpose with a shapes file (2 cases, weights 1 and 3);
#  race    tests/data/sanitize/race_shared: a shared-memory race, caught by racecheck (race_safe unsafe);
#  oob     tests/data/sanitize/oob_global_write: stores past the end at awkward n, caught by memcheck;
#  uninit  tests/data/sanitize/uninit_shared: stale shared memory at n not a multiple of 256: no compute-sanitizer
#          tool tracks shared-memory initialisation; the held-out shapes catch it (outside the kernel's domain);
#  halo    tests/data/sanitize/uninit_shared_halo: reads shared memory nobody wrote, multiplied by a zero weight, so it
#          is right while that memory holds finite numbers: the sanitizer gate's shared-memory fill catches it;
#  tile    tests/data/gates/tile_only: a fast variant correct only at multiples of its tile, the champion at the
#          search's cases and failing at the held-out shapes; with --max-working-set-mb 100 its 128 MiB full case
#          is fitted to 100 MiB, n = 13107200, still a multiple of the tile (requested vs realised dims in the summary).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh
# Run there: bash scripts/device/gates_check.sh   (carry [".carry/build"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
S=tests/data/sanitize
step "runner --dump-outputs (the determinism check's input)" 60 .carry/build/kopt_tests \
  --gtest_filter='RunnerGpu.CheckModeDumpsTheFirstSeedsOutputs:RunnerGpu.CorrectKernelPassesAndIsTimed' 2>&1 | tail -8
Q="--measure-budget-s 0.5 --seeds 2"
opt() {  # opt NAME LIMIT_S ARGS...: one optimize run, its log under $OUT, its summary printed
  local name=$1 limit=$2; shift 2
  step "optimize $name" "$limit" $K optimize "$@" $Q --out-dir runs/$name </dev/null >"$OUT/optimize_$name.log" 2>&1
  tail -25 "$OUT/optimize_$name.log"
  summ "$name"
  local d; d=$(newest_run $name)
  [ -n "$d" ] && for f in state.json stop.json holdout.json gates/cases.json gates/sanitize_baseline.json; do
    [ -f "$d/$f" ] && cp "$d/$f" "runs/json/$name/$(echo $f | tr / _)"; done
  [ -n "$d" ] && cp "$d/summary.md" "$OUT/summary_$name.md" 2>/dev/null
}
RUNS_WANTED=" ${GATES_RUNS:-va tr race oob uninit halo tile} "
want() { [[ "$RUNS_WANTED" == *" $1 "* ]]; }
want va && opt va 150 examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216 --time-budget 15 --iterations 1 --branches 4
printf 'rows=4096 cols=4096 weight=3\nrows=2048 cols=6144 weight=1\n' > runs/transpose_shapes.txt
want tr && opt tr 150 examples/transpose/kernel.cu --ref examples/transpose/ref.py --rows=4096 --cols=4096 \
  --shapes runs/transpose_shapes.txt --time-budget 15 --iterations 1 --branches 4
want race && opt race 40 $S/race_shared/kernel.cu --ref $S/race_shared/ref.py --n=1048576 --time-budget 5 --iterations 1 --branches 2
want oob && opt oob 45 $S/oob_global_write/kernel.cu --ref $S/oob_global_write/ref.py --n=1000003 --workload-matrix off \
  --time-budget 5 --iterations 1 --branches 2
want uninit && opt uninit 50 $S/uninit_shared/kernel.cu --ref $S/uninit_shared/ref.py --n=1048576 --time-budget 5 --iterations 1 --branches 2
# Shared memory nobody wrote, right whenever it holds a finite number: compute-sanitizer's four tools pass it, the
# gate's shared-memory fill (0xFF bytes) does not.
want halo && opt halo 60 $S/uninit_shared_halo/kernel.cu --ref $S/uninit_shared_halo/ref.py --n=1048576 --time-budget 5 \
  --iterations 1 --branches 2
want tile && opt tile 100 tests/data/gates/tile_only/kernel.cu --ref tests/data/gates/tile_only/ref.py --n=16777216 \
  --max-working-set-mb 100 --time-budget 20 --iterations 2 --branches 4
echo "=== outcomes"
python3 - <<'PY'
import json, os
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return {}
print(f"{'run':7} {'stop':18} {'cases (requested->realised)':44} {'speedup':8} {'race_safe':9} {'holdout p/out/fail':18} rejected / findings")
for name in ["va", "tr", "race", "oob", "uninit", "halo", "tile"]:
    if not os.path.isdir(f"runs/json/{name}"):
        continue
    j = f"runs/json/{name}"
    st, s, h = load(f"{j}/state.json"), load(f"{j}/summary.json"), load(f"{j}/holdout.json")
    cases = load(f"{j}/gates_cases.json").get("cases", [])
    ctext = ",".join(f"{c['name']}:{c['requested']}->{c['realised']}" if c.get("requested") != c.get("realised") else c["name"] for c in cases) or "one case"
    sp = s.get("headline", {}).get("speedup_vs_baseline")
    hd = f"{h.get('passed','-')}/{h.get('outside_domain','-')}/{h.get('champion_fails','-')}" if h else "-"
    rej = [f"{r.get('candidate')}:{r.get('gate')}" for r in st.get("gate_records", {}).get("rejected", [])]
    bs = st.get("gate_records", {}).get("baseline_sanitizer", {})
    find = bs.get("reason") or "; ".join(bs.get("reported", []))[:80]
    sb = load(f"{j}/gates_sanitize_baseline.json")
    if sb.get("smem_fill"):
        find += f" [smem_fill {sb['smem_fill'].get('outcome')}: {sb['smem_fill'].get('message', '')[:80]}]"
    stop = st.get("stop_reason", "?") + ("/" + load(f"{j}/stop.json").get("stage", "") if st.get("stop_reason") == "gate_failed" else "")
    print(f"{name:7} {stop:18} {ctext[:44]:44} {('%.2fx' % sp) if sp else '-':8} {st.get('race_safe','?'):9} {hd:18} {' '.join(rej)[:60]} {find[:90]}")
    w = s.get("headline", {}).get("warning")
    if w:
        print(f"        WARNING: {w[:160]}")
PY
finish_check
