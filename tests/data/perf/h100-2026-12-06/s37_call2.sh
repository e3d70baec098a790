#!/usr/bin/env bash
# Session 37, call B: issue 35's "no run measures zero candidates" on the corpus kernels not yet run with default
# flags on a GPU: the four CUTLASS GEMMs with nothing to derive (the flag methods only), then FLA's parallel attention
# (3,750 derived points, no sweep). kopt optimize --time-budget 20 under a SIGINT cap each.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s); TOTAL_S=${TOTAL_S:-575}
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
mkdir -p "$OUT" runs .carry/build
cp .carry/bk/* .carry/build/
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
tar xzf .carry/cutlass.tgz -C .carry && export CUTLASS_PATH=$PWD/.carry/cutlass
nvidia-smi --query-gpu=name --format=csv,noheader
ns() {  # ns NAME CAP DIMS...
  local name=$1 cap=$2; shift 2
  [ "$(left)" -gt 60 ] || { echo "$name: not started ($(left) s left)"; return; }
  [ "$cap" -gt $(( $(left) - 8 )) ] && cap=$(( $(left) - 8 ))
  local flags; flags=$(sed -n 's/^flags: //p' examples/corpus/$name/dims.txt)
  # shellcheck disable=SC2086
  ( timeout -s INT "$cap" $K optimize examples/corpus/$name/kernel.* --ref examples/corpus/$name/ref.py "$@" $flags \
      --time-budget 20 --out-dir runs/ns_$name </dev/null 2>&1 | stamp >"$OUT/ns_$name.log" )
  echo "$name: rc=$? cap $cap at $(( $(date +%s) - T0 )) s"
  local d; d=$(ls -d runs/ns_$name/kopt_runs/run_* 2>/dev/null | head -1)
  [ -n "$d" ] && for f in state.json summary.md summary.json; do cp "$d/$f" "$OUT/ns_${name}_$f" 2>/dev/null; done
  [ -n "$d" ] && python3 scripts/perf/ttr_summary.py "$d/state.json" --name "$name"
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
ns cutlass_basic_gemm 110 --M=4096 --N=4096 --K=4096
ns cutlass_sgemm_2 110 --M=5120 --N=5120 --K=4096
ns cutlass_sgemm_sm80 110 --M=5120 --N=5120 --K=4096
ns cutlass_hgemm_sm80 110 --M=5120 --N=5120 --K=4096
ns fla_parallel_attn 130 --B=4 --T=4096 --HQ=32 --H=8 --D=128
(cd "$OUT" && tar czf call_s37b.tgz --exclude=call_s37b.tgz . 2>/dev/null)
echo "=== end [$(( $(date +%s) - T0 )) s]"
