#!/usr/bin/env bash
# Session 43 call. Modes (CALL_MODE forces one; default: ttr on an H200, corpus elsewhere):
#  ab     Triton candidates compiled ahead, on against off: corpus-bench optimize (default flags, no --time-budget) of
#         AB_NAMES (default liger_geglu) with KOPT_TRITON_PRECOMPILE=1, then without, each under AB_LIMIT_S.
#  ttr    issue 36 on the H200: vector_add cold twice and over its cache; kopt bench of a second candidate (worker)
#         and the hostile verdicts; sgemm_tunable seeds 1-5; Kernel Tuner bayes_opt x5 (with .whl carried).
#  corpus issue 35's corpus benchmark, default flags, CB_NAMES in order (optimize + sweep).
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-565}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" runs
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader; cat .carry/build/COMMIT; date -u
mode=${CALL_MODE:-}
[ -n "$mode" ] || case "$gpu" in *H200*) mode=ttr ;; *) mode=corpus ;; esac
echo "mode $mode"
export CUTLASS_PATH=$PWD/.carry/cutlass
cands_summary() {  # each candidate's precompile and measuring results
  find runs/cb -path '*/candidates/*' \( -name run.json -o -name precompile.json \) -size -1000k | tar czf "$1" -T - 2>/dev/null
  for f in $(find runs/cb -path '*/candidates/*' -name run.json | sort); do python3 -c "
import json,sys,os
r=json.load(open(sys.argv[1])); ph=r.get('phases_ms',{}); d=os.path.dirname(sys.argv[1])
p=json.load(open(d+'/precompile.json')) if os.path.exists(d+'/precompile.json') else {}
print(d.split('/candidates/')[1][:40], r.get('status'), 'first_call', round(ph.get('first_call',0)), 'timing', round(ph.get('timing',0)), 'total', round(ph.get('total',0)), 'pre', p.get('status'), [round(x) for x in p.get('first_calls_ms',[p.get('first_call_ms',0)])], round(p.get('phases_ms',{}).get('total',0)), 'cases', [(round(c.get('phases_ms',{}).get('first_call',0)), round(c.get('phases_ms',{}).get('total',0))) for c in r.get('cases',[])], {k: round(v) for k,v in ph.items() if v > 150})" "$f"; done 2>&1 | head -40
  for s in $(find runs/cb -name state.json -path '*kopt_runs*' | head -3); do python3 -c "
import json,sys; s=json.load(open(sys.argv[1])); print('state', s.get('stop_reason'), {k: round(v,1) for k,v in (s.get('phase_seconds') or {}).items()})" "$s"; done
}
if [ "${PROBE:-auto}" = 1 ] || { [ "${PROBE:-auto}" = auto ] && [ "$mode" != ttr ]; }; then  # liger_dyt's timing probe at 16384 x 4096: this tree's harness (sync floor) and HEAD's (.carry/old_harness)
  K=examples/corpus/liger_dyt; PT0=$(date +%s)
  .carry/build/kopt annotate $K/kernel.py --write $K/probe_annotated.py --json "$OUT/probe_derived.json" >/dev/null 2>&1
  PYTHONPATH=python timeout 120 python3 -m kopt_harness golden --triton-kernel $K/probe_annotated.py --ref $K/ref.py --dims '{"M":16384,"N":4096}' --seeds 1 --out runs/probe_golden >"$OUT/probe_golden.log" 2>&1; echo "probe golden rc=$?"
  for run in new1 old1 new2 old2; do
    hp=python; case $run in old*) hp=.carry/old_harness/python ;; esac
    PYTHONPATH=$hp timeout 60 python3 -m kopt_harness triton-run --kernel $K/probe_annotated.py --golden runs/probe_golden --out "$OUT/probe_$run.json" --mode paired \
      --config '{"num_warps":0}' --config '{"num_warps":8}' --rounds 20 --max-time-s 2 >"$OUT/probe_$run.log" 2>&1
    python3 -c "
import json,sys,statistics as st
r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing_method'), r.get('fallback_reason'), [round(st.median(l['samples_ms']),4) for l in r.get('libs',[]) if l.get('samples_ms')],
  [(p['timing_method'][:12], round(p['probe_event_median_ms'],4), round(p['probe_residual_median_ms'],4), round(p.get('probe_sync_floor_median_ms',-1),4)) for p in r.get('probes',[])])" "$OUT/probe_$run.json" $run 2>&1 | tail -1
  done
  echo "probe done in $(( $(date +%s) - PT0 )) s"
fi
if [ "$mode" = ab ]; then
  for pc in ${AB_PCS:-1 0}; do
    [ "$(left)" -gt 150 ] || { echo "ab pc=$pc skipped: $(left) s left"; continue; }
    rm -rf runs/cb runs/ab_cache_pc$pc runs/ab_triton_pc$pc; lim=$(( ${AB_LIMIT_S:-220} < $(left) - 40 ? ${AB_LIMIT_S:-220} : $(left) - 40 ))
    KOPT_CACHE_DIR=$PWD/runs/ab_cache_pc$pc TRITON_CACHE_DIR=$PWD/runs/ab_triton_pc$pc KOPT_TRITON_PRECOMPILE=$pc OUT=$OUT/ab_pc$pc CB_TIME_BUDGET_S=none CB_STEPS=optimize CB_OPT_LIMIT_S=$lim CB_DEADLINE_S=$(( lim + 30 )) CB_MIN_KERNEL_S=60 CB_CASES=off \
      timeout $(( lim + 35 )) bash scripts/device/check.sh corpus-bench ${AB_NAMES:-liger_geglu} >"$OUT/ab_pc$pc.log" 2>&1
    echo "=== ab pc=$pc rc=$? limit $lim [$(( $(date +%s) - T0 )) s]"
    cands_summary "$OUT/ab_pc${pc}_candidates.tgz"
    grep -E '^(=== optimize|corpus-bench)' "$OUT/ab_pc$pc.log" | cut -c1-300 | tail -6
  done
fi
if [ "$mode" = ttr ]; then
  rm -rf runs/ttr_* runs/bw_* runs/json runs/kt
  TTR_COLD_RUNS=2 timeout 150 bash scripts/device/check.sh time-to-result cold >"$OUT/ttr_cold.log" 2>&1; echo "cold rc=$? [$(( $(date +%s) - T0 )) s]"
  grep -E '^ttr_' "$OUT/ttr_cold.log"
  . scripts/device/lib.sh
  for c in ttr_cold1 ttr_cold2 ttr_cold_warm; do d=$(newest_run $c "*_*"); [ -n "$d" ] || continue
    (cd "$d" && find . \( -path './golden*' -o -path './build' \) -prune -o -type f \( -name '*.json' -o -name '*.log' \) -size -256k -print | tar czf "$OUT/${c}_rundir.tgz" -T - 2>/dev/null)
  done
  timeout ${BW_S:-70} bash scripts/device/check.sh time-to-result bench-worker >"$OUT/ttr_bw.log" 2>&1; echo "bench-worker rc=$? [$(( $(date +%s) - T0 )) s]"
  grep -E '^(=== ttr_bw.*rc=|hostile verdicts)' "$OUT/ttr_bw.log" | head -30
  [ -n "${SG_SKIP:-}" ] || timeout $(( $(left) - ${KT_RESERVE_S:-150} )) bash scripts/device/check.sh time-to-result sgemm-seeds >"$OUT/ttr_sg.log" 2>&1; echo "sgemm rc=$? [$(( $(date +%s) - T0 )) s]"
  grep -E '^ttr_' "$OUT/ttr_sg.log"
  if [ -z "${SG_SKIP:-}" ] && [ -d .whl ] && [ "$(left)" -gt 100 ]; then
    KT_FEVALS=30 KT_LIMIT_S=35 timeout $(( $(left) - 10 )) bash scripts/device/check.sh kt-live bayes_opt:1 bayes_opt:2 bayes_opt:3 bayes_opt:4 bayes_opt:5 >"$OUT/kt.log" 2>&1
    echo "kt rc=$? [$(( $(date +%s) - T0 )) s]"; grep -E '^(=== kt|kernel_tuner)|within|best' "$OUT/kt.log" | cut -c1-300 | head -30
  fi
fi
if [ "$mode" = corpus ] && [ "${CB_NAMES:-}" != none ]; then  # CB_NAMES=none: the probe alone
  [ -f .carry/cutlass.tgz ] && tar xzf .carry/cutlass.tgz -C .carry
  rm -rf runs/cb
  CB_TIME_BUDGET_S=none CB_STEPS="${CB_STEPS:-optimize sweep}" CB_OPT_LIMIT_S=${CB_OPT_LIMIT_S:-150} CB_DEADLINE_S=$(( $(left) - 25 )) CB_MIN_KERNEL_S=${CB_MIN_KERNEL_S:-150} \
    timeout $(( $(left) - 10 )) bash scripts/device/check.sh corpus-bench ${CB_NAMES:-liger_swiglu liger_dyt liger_rope liger_geglu} >"$OUT/cb.log" 2>&1
  echo "corpus rc=$? [$(( $(date +%s) - T0 )) s]"
  cands_summary "$OUT/candidates_json.tgz"
  grep -E '^(=== (optimize|sweep|corpus)|corpus-bench|\| )' "$OUT/cb.log" | cut -c1-400 | tail -30
fi
(cd "$OUT" && tar czf /tmp/call_s43.tgz . 2>/dev/null && find . -mindepth 1 -delete && mv /tmp/call_s43.tgz .)
echo "=== end [$(( $(date +%s) - T0 )) s]"
