#!/usr/bin/env bash
# Planned (session 29 wrote it; no machine was lent that session): the first call on whatever GPU comes. Verifies on
# a GPU what sessions 28-29 wrote without one and asks the machine where a small kernel's time goes:
# 1. `check.sh time-to-result optimize` (vector_add 2^24, cold on the fresh machine, then warm): the held-out shapes
#    on one seed (d94f0f5), the golden seeds read tensor by tensor (4c6b89d); kept: the cold run's gates/ and one
#    iteration's races, whose results now split `bind_ms` (bind_steps_ms: load, allocate, resident, upload) and the
#    probe (probe_cost_ms: unblocked, snapshot, held, blocked): a vector_add race's probe was 96-195 ms of 155-295
#    (s28), sgemm's 24-43 ms; the cause is not known.
# 2. kopt_tests RunnerGpu.* (the new bind/probe fields asserted) and `gpu_suite.sh optimize triton_softmax` (fails
#    unless every Triton candidate's other cases were checked in its timed child: --also-check).
# 3. corpus-bench of four Triton kernels not run yet: the golden-data key of a derived Triton space (d209d0e: the
#    contract line right after the golden data, prepare's "from the cache") and the candidates' time with the other
#    cases in the timed child (liger: 8 s a candidate in s28).
# Carry: .carry/build/kopt, .carry/build/kopt_tests, .carry/build/COMMIT, examples/corpus/_fetched, this script as
# .carry/call.sh; run under `timeout 590`.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
echo "=== 1. time-to-result optimize [$(( $(date +%s) - T0 )) s]"
TTR_OPT_LIMIT_S=110 timeout 240 bash scripts/device/check.sh time-to-result optimize 2>&1 | grep -E "^phases|^history|^reuse|rc=|===|wall" | cut -c1-700
cp "$OUT"/*.log "$OUT/keep/" 2>/dev/null
for r in ttr_opt1 ttr_opt2; do
  d=$(ls -d runs/$r/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || continue
  mkdir -p "$OUT/keep/$r"; cp "$d"/state.json "$d"/summary.json "$d"/summary.md "$OUT/keep/$r/" 2>/dev/null
  (cd "$d" && tar czf "$OUT/keep/$r/json.tgz" gates iter_01/*.json iter_01/candidates/*/run.json cases 2>/dev/null)
done
python3 - runs/ttr_opt1 <<'PY' 2>&1 | head -20
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/kopt_runs/*/gates/correctness*.json"))[:3]:
    d = json.load(open(f)); print(f.split("/")[-1], [s.get("bind_steps_ms") for s in d.get("seeds", [])][:2])
for f in sorted(glob.glob(sys.argv[1] + "/kopt_runs/*/iter_01/candidates/*/run.json"))[:4]:
    d = json.load(open(f)); print(f.split("/")[-2], d.get("phases_ms"), [l.get("timing_info", {}).get("probe_cost_ms") for l in d.get("libs", [])])
PY
echo "=== 2. RunnerGpu and the Triton optimize [$(( $(date +%s) - T0 )) s]"
timeout 150 .carry/build/kopt_tests --gtest_filter='RunnerGpu.*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |Failure|FAILED" | head -20
KOPT_GPU_SUITE_DIR=$PWD/runs/suite timeout 150 bash scripts/gpu_suite.sh optimize triton_softmax >"$OUT/keep/suite_optimize_triton_softmax.log" 2>&1
echo "suite optimize triton_softmax exit $?"; tail -3 "$OUT/keep/suite_optimize_triton_softmax.log"
echo "=== 3. corpus-bench [$(( $(date +%s) - T0 )) s]"
left=$(( 560 - ($(date +%s) - T0) ))
if [ "$left" -gt 200 ] && [ -d examples/corpus/_fetched ]; then
  CB_CASES=off CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=150 CB_DEADLINE_S=$(( left - 40 )) \
    bash scripts/device/check.sh corpus-bench liger_geglu liger_swiglu liger_dyt liger_rope 2>&1 \
    | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion" | cut -c1-400 | tail -30
  mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
  find runs/cb -path '*/opt/*' -name run.json | head -200 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
fi
tar czf "$OUT/s29_call1.tgz" -C "$OUT" keep && rm -rf "$OUT/keep"
echo "=== end [$(( $(date +%s) - T0 )) s]"
