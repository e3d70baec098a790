#!/usr/bin/env bash
# Session 36, call 3 (H100): (1) issue 36's "no result moves": PERFORMANCE.md §5's timing table (check.sh timing
# no-tests) by a55e507, the table's commit, and by this build, alternated on one machine; (2) issue 35's "no run
# measures zero candidates" on the corpus kernels with nothing to derive (the flag methods only): kopt optimize
# --time-budget 20 under a SIGINT cap, CUB first, then the CUTLASS permute and a CuTe GEMM.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-560}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" /tmp/old/.carry/build runs
. scripts/device/lib.sh
tar xzf .carry/old_tree.tgz -C /tmp/old
tar xJf .carry/n_pack.txz -C .carry
cp .carry/old_kopt /tmp/old/.carry/build/kopt; echo a55e507 >/tmp/old/.carry/build/COMMIT
cp -r .carry/timing .carry/wheels /tmp/old/.carry/
timing() {  # timing TAG DIR
  (cd "$2" && OUT=$OUT/t_$1 timeout 200 bash scripts/device/check.sh timing no-tests >"$OUT/timing_$1.log" 2>&1)
  echo "timing $1 rc=$? at $(( $(date +%s) - T0 )) s"; cat "$OUT/t_$1/timing_table.txt" 2>/dev/null | head -9
}
timing old1 /tmp/old
timing new1 "$PWD"
K=$PWD/.carry/build/kopt
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
tar xzf .carry/cutlass.tgz -C .carry && export CUTLASS_PATH=$PWD/.carry/cutlass
ns() {  # ns NAME CAP DIMS...
  local name=$1 cap=$2; shift 2
  [ "$(left)" -gt $((cap + 10)) ] || { echo "$name: not started ($(left) s left)"; return; }
  local flags; flags=$(sed -n 's/^flags: //p' examples/corpus/$name/dims.txt)
  # shellcheck disable=SC2086
  ( timeout -s INT "$cap" $K optimize examples/corpus/$name/kernel.cu --ref examples/corpus/$name/ref.py "$@" $flags \
      --time-budget 20 --out-dir runs/ns_$name </dev/null 2>&1 | stamp >"$OUT/ns_$name.log" )
  local d; d=$(ls -d runs/ns_$name/kopt_runs/run_* 2>/dev/null | head -1)
  [ -n "$d" ] && for f in state.json summary.md summary.json; do cp "$d/$f" "$OUT/ns_${name}_$f" 2>/dev/null; done
  python3 - "$d/state.json" "$name" <<'PY' 2>&1 | tail -3
import json, sys, collections
s = json.load(open(sys.argv[1]))
h = [m for m in s["history"] if m["candidate"]["id"] != "baseline"]
st = collections.Counter(m["status"] for m in h)
ch = s.get("champion") or {}
b = next((m for m in s["history"] if m["candidate"]["id"] == "baseline"), {})
print(f"{sys.argv[2]}: {len(h)} candidates {dict(st)}; baseline {b.get('median_ms')} ms, champion {ch.get('candidate', {}).get('id')} "
      f"{ch.get('median_ms')} ms; stop {s.get('stop_reason')}; wall {s.get('wall')}; phases {s.get('phase_seconds')}")
PY
}
ns cub_inclusive_sum 70 --n=16777216
ns cutlass_nchw_to_nhwc 100 --N=32 --C=256 --H=56 --W=56
ns cutlass_sgemm_1 140 --M=2048 --N=2048 --K=1024
[ "$(left)" -gt 170 ] && { timing old2 /tmp/old; timing new2 "$PWD"; }
ns cutlass_nhwc_to_nchw 100 --N=32 --C=256 --H=56 --W=56
(cd "$OUT" && tar czf call_n.tgz --exclude=call_n.tgz . 2>/dev/null)
echo "=== end [$(( $(date +%s) - T0 )) s]"
