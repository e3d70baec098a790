#!/usr/bin/env bash
# Planned for session 26 (issue 35), not run: session 25's call 2 again after 48dfeb8 (the fork server preloads a Triton
# kernel's installed imports: docs/TRITON.md), to measure what it saves (s25: a child 7.7 s, 5.2 of it importing the
# kernel; 2 candidates a kernel in a 160 s cap; the sweep 0 of 35 in 150 s). As s25: corpus-bench (kopt's default optimize with a 40 s search budget under a 160 s cap,
# kopt bench of the project's choice, the sweep of the derived space at the benchmark's dims; CB_CASES=off: the
# other cases' sweeps cost a Triton kernel more than one call affords) on as many of the kernels as the deadline lets
# start, then where a Triton candidate's time goes: each candidate's run.json holds the Triton child's phases_ms
# (interpreter start, imports, golden load, sealing, kernel import, device init, first call with the JIT, verify,
# timing). Everything packed into ONE file in $OUT (the device tool brings back about eight files).
# Carry: .carry/build/kopt, .carry/build/COMMIT, this script as .carry/call.sh, examples/corpus/_fetched.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
export KOPT_DATA_DIR=$PWD/data
mkdir -p "$OUT/keep"
echo "=== 1. corpus-bench [$(( $(date +%s) - T0 ))s]"
CB_CASES=off CB_TIME_BUDGET_S=40 CB_MIN_KERNEL_S=150 CB_DEADLINE_S=520 CB_WALL_S=545 \
  bash scripts/device/check.sh corpus-bench liger_rms_norm liger_softmax fla_softmax liger_layer_norm 2>&1 \
  | grep -E "^corpus|===|rc=|Kernels run|Median|kernel +median|champion" | cut -c1-400 | tail -40
mv "$OUT"/corpus_bench.tgz "$OUT"/corpus_table.* "$OUT/keep/" 2>/dev/null
echo "=== 2. the Triton candidates' phases [$(( $(date +%s) - T0 ))s]"
find runs/cb -path '*/opt/*' -name run.json | head -200 | tar czf "$OUT/keep/candidate_runs.tgz" -T - 2>/dev/null
python3 - runs/cb <<'PY' | tee "$OUT/keep/triton_phases.txt"
import glob, json, statistics, sys
for k in sorted(glob.glob(sys.argv[1] + "/*/opt")):
    per = {}
    for f in glob.glob(k + "/**/run.json", recursive=True):
        try: ph = json.load(open(f)).get("phases_ms") or {}
        except Exception: continue
        for n, v in ph.items():
            if isinstance(v, (int, float)): per.setdefault(n, []).append(v)
    print(k.split("/")[-2])
    for n, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"  {n:24s} median {statistics.median(v):9.1f} ms  max {max(v):9.1f} ms  n={len(v)}")
PY
# The fork servers' logs: "preloaded N installed module(s) ... in S s", or why one did not serve.
for f in "${TMPDIR:-/tmp}"/kopt-forkserver-*/*.log; do echo "== $f"; tail -5 "$f"; done >"$OUT/keep/forkserver_logs.txt" 2>&1
grep -h "preloaded\|not serving" "$OUT/keep/forkserver_logs.txt" | head
tar czf "$OUT/s26_call1.tgz" -C "$OUT" keep && rm -rf "$OUT/keep" "$OUT"/runs_json_*.tgz
echo "=== end [$(( $(date +%s) - T0 )) s]"
