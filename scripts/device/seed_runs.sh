#!/usr/bin/env bash
# Issue 16's live runs (sourced by the device checks): seed_runs NAME BUDGET_S TABLE_BEST_MS SEEDS -- KERNEL ARGS...
# runs `kopt optimize KERNEL ARGS --search-seed S --time-budget BUDGET_S --out-dir runs/NAME_seedS` for each seed, with kopt's
# default flags otherwise. The budget only ends a run (docs/SEARCH.md); to save device time each run is cut by
# SIGINT when its held-out shapes start (after the final profile) or once its state says the budget is spent (what
# was measured is kept; SEED_RUNS_CUT=0 lets every run finish). Prints, per seed, the candidates, the best and the first
# evaluation within 3% of TABLE_BEST_MS with its seconds after the gates, and the per-candidate costs.
seed_runs() {
  local name=$1 budget=$2 best=$3 seeds=$4; shift 5
  local s
  for s in $seeds; do
    local out="runs/${name}_seed$s" t0; t0=$(date +%s)
    echo "=== $name seed $s: kopt optimize $* --search-seed $s --time-budget $budget"
    $K optimize "$@" --search-seed "$s" --time-budget "$budget" --out-dir "$out" </dev/null >"$out.log" 2>&1 &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      sleep 1
      local st; st=$(ls "$out"/kopt_runs/run_*/state.json 2>/dev/null | head -1)
      # The search is over once the held-out shapes start (after the final profile); a state written after an
      # iteration that ended past the budget says so earlier.
      if [ "${SEED_RUNS_CUT:-1}" = 1 ] && { grep -q "^held-out shapes:" "$out.log" 2>/dev/null || { [ -n "$st" ] && \
           python3 -c "import json,sys; j=json.load(open('$st')); s=j['stop']; c=j['champion']['candidate']['id']; sys.exit(0 if s.get('search_s',0)>=$budget and (c=='baseline' or c in j.get('verified',[c])) else 1)" 2>/dev/null; }; }; then
        sleep 1; kill -INT "$pid" 2>/dev/null; break
      fi
    done
    wait "$pid"; local rc=$?
    echo "=== $name seed $s rc=$rc $(( $(date +%s) - t0 )) s"
    tail -3 "$out.log"
    local d; d=$(ls -d "$out"/kopt_runs/run_* 2>/dev/null | head -1)
    [ -n "$d" ] && python3 - "$d" "$s" "$best" "$name" <<'PY'
import json, sys
d, seed, best, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
st = json.load(open(d + "/state.json"))
h = st.get("history", [])
found, first3 = None, None
for i, m in enumerate(h):
    ms = m.get("median_ms")
    if ms is None or m.get("status") not in (None, "ok"): continue
    found = ms if found is None else min(found, ms)
    if first3 is None and ms <= best * 1.03: first3 = (i + 1, round(m.get("search_s", -1), 1))
c = [m.get("cost_ms", {}) for m in h[1:] if m.get("cost_ms")]
med = lambda xs: sorted(xs)[len(xs) // 2] if xs else None
print("SEED %s %s: %d candidates, best %.4f ms, stop %s, search_s %.1f, first within 3%% of %.4f: %s, median ms compile %s measure %s sass %s; phases %s" % (
    name, seed, len(h), found or -1, st.get("stop_reason"), st["stop"].get("search_s", -1), best, first3,
    med([x.get("compile", 0) for x in c]), med([x.get("measure", 0) for x in c]), med([x.get("sass", 0) for x in c]),
    json.dumps({k: round(v, 1) for k, v in st.get("phase_seconds", {}).items()})))
PY
    mkdir -p "runs/json/${name}_seed$s"; [ -n "$d" ] && cp "$d"/state.json "$d"/options.json "runs/json/${name}_seed$s/" 2>/dev/null
    [ -n "$d" ] && cp "$d"/summary.json "runs/json/${name}_seed$s/" 2>/dev/null
    # After each seed, so a call cut by its time limit still brings back what finished.
    [ -n "${OUT:-}" ] && (cd runs && tar czf "$OUT/${name}_seed$s.tgz" --exclude='*.so' --exclude='golden*' --exclude='*.cubin' \
      --exclude='*.ncu-rep' --exclude=build --exclude='*.safetensors' "${name}_seed$s" "${name}_seed$s.log" 2>/dev/null)
  done
}
