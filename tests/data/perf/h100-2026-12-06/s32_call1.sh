#!/usr/bin/env bash
# Session 32, call 1 (issue 36): the golden data made without copying a tensor (python/kopt_harness: the seed files
# written from the arrays' own memory, the draws on a pool and a seed ahead, the inputs' hash beside the reference),
# measured against the harness before it (.carry/old_harness: HEAD's python/kopt_harness) in the same call, then
# kopt's whole wall with it:
#  0. golden-batch, old then new harness, one process each: vector_add 2^24 and sgemm 4096^3 (--time-reference, a
#     sealed seed: what a run's first request asks), twice each; the seed files compared byte for byte;
#  1. optimize vector_add 2^24 over fresh caches (cold kopt caches; the machine warm from step 0), then warm;
#  2. sgemm_tunable 4096^3, search seeds 1-5, each over fresh caches, cut at CUT_S;
#  3. kopt bench: vector_add and sgemm_tunable, a first call then second candidates;
#  4. the hostile vadd kernels through kopt bench (their verdicts: docs/PERFORMANCE.md section 11).
# Every stderr line stamped with seconds from the command's start; each step skipped when TOTAL_S would be passed.
# Carry: .carry/build (kopt, the probe, COMMIT), .carry/old_harness, this script as .carry/call1.sh.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-570} CUT_S=${CUT_S:-48}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT; ls .carry/build
mkdir -p "$OUT/keep" runs
. scripts/device/lib.sh  # stamp
K=.carry/build/kopt
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
pack() { tar czf "$OUT/s32_call1.tgz" -C "$OUT" keep; }  # after every step: a cut call still brings back what ended
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
# 0. golden data, the harness before and after, the same requests.
G=runs/golden_bench; mkdir -p $G
p() { printf '{"name":"%s","kind":"pointer","dtype":"float32","const":%s}' "$1" "$2"; }
s() { printf '{"name":"%s","kind":"scalar","dtype":"int32","const":false}' "$1"; }
echo "{\"params\":[$(p a true),$(p b true),$(p c false),$(s n)]}" >$G/va_sig.json
echo "{\"params\":[$(p A true),$(p B true),$(p C false),$(s M),$(s N),$(s K)]}" >$G/sg_sig.json
for who in old new; do
  python3 - "$G" "$who" >$G/requests_$who.json <<'PY'
import json, sys
g, who = sys.argv[1], sys.argv[2]
va = ["--ref", "examples/vector_add/ref.py", "--signature", f"{g}/va_sig.json", "--dims", '{"n":16777216}']
sg = ["--ref", "examples/sgemm_tunable/ref.py", "--signature", f"{g}/sg_sig.json", "--dims", '{"M":4096,"N":4096,"K":4096}']
reqs = []
for rep in (1, 2):
    for name, r in (("va", va), ("sg", sg)):
        reqs.append(r + ["--out", f"{g}/{who}_{name}_{rep}", "--time-reference", "--sealed-dir", f"{g}/sealed_{who}_{name}_{rep}/tok"])
print(json.dumps(reqs))
PY
done
for who in old new; do
  pp=python; [ $who = old ] && pp=.carry/old_harness/python
  ( cd . && PYTHONPATH=$pp timeout 150 python3 -m kopt_harness golden-batch --preload imports --requests $G/requests_$who.json \
      >"$OUT/keep/golden_$who.jsonl" 2>"$OUT/keep/golden_$who.err" ); echo "golden $who rc=$? [$(( $(date +%s) - T0 )) s]"
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(' ', j.get('out','?').split('/')[-1], j.get('status'), 'elapsed', j.get('elapsed_s'), 'ref ms', j.get('reference_median_ms'), j.get('phase_seconds', ''))" "$OUT/keep/golden_$who.jsonl"
done
for f in $(cd $G/old_va_1 && ls seed_*); do cmp -s $G/old_va_1/$f $G/new_va_1/$f && echo "va $f: same bytes" || echo "va $f: DIFFERENT"; done
for f in $(cd $G/old_sg_1 && ls seed_*); do cmp -s $G/old_sg_1/$f $G/new_sg_1/$f && echo "sg $f: same bytes" || echo "sg $f: DIFFERENT"; done
rm -rf $G/old_* $G/new_* $G/sealed_*; pack
state_line() {  # state_line NAME RUNS_DIR: state.json (wall, phases) kept, one line said
  local d; d=$(ls -d "$2"/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  cp "$d/state.json" "$OUT/keep/$1_state.json"; cp "$d/summary.md" "$OUT/keep/$1_summary.md" 2>/dev/null
  cp "$d/golden_stream.log" "$OUT/keep/$1_golden_stream.log" 2>/dev/null
  python3 - "$OUT/keep/$1_state.json" "$1" <<'PY' 2>/dev/null
import json, sys
s = json.load(open(sys.argv[1])); w = s.get("wall") or {}; best = 3.018464  # the H200 sweep's best (h200-2026-11-30)
line = f"{sys.argv[2]}: wall " + str({k: round(v, 1) for k, v in w.items() if v is not None})
line += " phases " + str({k: round(v, 1) for k, v in (s.get("phase_seconds") or {}).items()})
if "sg" in sys.argv[2]:
    hit = [h for h in s["history"] if h.get("median_ms") and h.get("status", "ok") == "ok" and h["median_ms"] <= best * 1.03]
    first = min((h.get("search_s", 0) for h in hit), default=None)
    line += f" evaluations {len(s['history']) - 1}; first within 3% of the sweep's best at search_s {first}"
    if first is not None and w.get("gates_s") is not None: line += f" -> whole {w['gates_s'] + first:.1f} s"
print(line)
PY
  grep -h "golden-batch" "$OUT/keep/$1_golden_stream.log" 2>/dev/null | head -4 | cut -c1-230
}
opt() {  # opt NAME LIMIT ENV... -- ARGS: one optimize, stamped log kept
  local name=$1 limit=$2; shift 2; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  [ "$(left)" -gt $((limit + 5)) ] || { echo "$name: not started ($(left) s left)"; return; }
  # shellcheck disable=SC2086
  ( env "${envs[@]}" timeout -s INT "$limit" $K optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  echo "[$(( $(date +%s) - T0 )) s] $(grep -h 'gates passed\|Whole wall' "$OUT/keep/$name.log" | tr -s ' ' | cut -c1-200 | tr '\n' ' ')"
  state_line "$name" "runs/$name"; pack
}
# 1. vector_add over fresh caches, then warm.
opt va_cold 100 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
# 2. sgemm seeds 1-5, fresh caches each.
for s in 1 2 3 4 5; do opt "sg_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_s$s" -- $ST --search-seed "$s"; done
# 3. bench: a first call over the optimize's caches, then second candidates.
bench() {  # bench TAG CACHE FLAGS ARGS...
  local tag=$1 cache=$2 flags=$3; shift 3
  [ "$(left)" -gt 25 ] || return
  local t; t=$(date +%s.%N)
  # shellcheck disable=SC2086
  KOPT_CACHE_DIR=$cache timeout 60 $K bench "$@" $flags --no-reference-timing --json "$OUT/keep/bench_$tag.json" \
    --out-dir runs/bench_$tag </dev/null >/dev/null 2>&1
  echo "bench $tag ($flags) rc=$? $(python3 -c "import time;print(round(time.time()-$t,2))") s: $(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(j['outcome']['status'], j['outcome'].get('timing',{}).get('median_ms'), j.get('warm_worker',{}).get('used'))" "$OUT/keep/bench_$tag.json" 2>/dev/null)"
}
bench va1 "$PWD/runs/cache_va" "" $VA
for i in 2 3 4; do bench va$i "$PWD/runs/cache_va" "-DITEMS=$i" $VA; done
bench sg1 "$PWD/runs/cache_s1" "" $ST
bench sg2 "$PWD/runs/cache_s1" "-DBM=128 -DBN=128 -DTM=8 -DTN=8" $ST
bench sg3 "$PWD/runs/cache_s1" "-DBM=64 -DBN=128 -DTM=8 -DTN=8" $ST
bench sg4 "$PWD/runs/cache_s1" "-DBM=128 -DBN=64 -DTM=8 -DTN=8" $ST
pack
# 4. the hostile vadd kernels (kopt bench, y = a + b at 2^20).
for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread \
         vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key; do
  [ "$(left)" -gt 8 ] || break
  timeout 60 $K bench tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 \
    --no-reference-timing --measure-budget-s 1 --json "$OUT/keep/h_$k.json" --out-dir runs/h_$k >/dev/null 2>&1
  echo "hostile $k rc=$? $(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(j['outcome'].get('status'), ','.join(j.get('flags', [])), (j.get('rejected') or {}).get('rule', ''))" "$OUT/keep/h_$k.json" 2>/dev/null)"
done
pack && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
