# Shared by the device check scripts (source it): step NAME LIMIT_S CMD... runs CMD under `timeout`, printing
# its exit code and seconds; summ RUN prints runs/RUN's optimize summary and copies its summary, options and
# roofline JSON under runs/json/RUN.
# stamp: each line of stdin with the seconds since it started ("%7.2f line"), for whole-wall logs.
stamp() { python3 -u -c 'import sys,time
t=time.time()
for l in sys.stdin: sys.stdout.write("%7.2f %s" % (time.time()-t, l))'; }
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N); echo "=== $name: $*"; timeout $limit "$@"; local rc=$?; echo "=== $name rc=$rc $(python3 -c "import time;print(round(time.time()-$t0,1))") s"; }
# newest_run NAME [PATTERN]: the newest of runs/NAME/kopt_runs/PATTERN (default run_*), by age (ls -dt): a warm device
# machine keeps the runs of earlier calls, and the first by name was an earlier call's (session 38: a cold run
# reported the previous call's figures). Every device script finds a step's run directory with it.
newest_run() { ls -dt "runs/$1"/kopt_runs/${2:-run_*} 2>/dev/null | head -1; }
# corpus_kernel NAME: examples/corpus/NAME's kernel (kernel.cu, else kernel.py); corpus_dims NAME KEY: the line KEY of its
# dims.txt (typical: the dims its project launches at; flags: what its compile needs). The corpus suites and
# corpus_bench.sh read a corpus kernel through these two.
corpus_kernel() { ls "examples/corpus/$1/kernel.cu" "examples/corpus/$1/kernel.py" 2>/dev/null | head -1; }
corpus_dims() { sed -n "s/^$2: //p" "examples/corpus/$1/dims.txt"; }
summ() { local d; d=$(newest_run $1); [ -n "$d" ] || return; echo "--- summary of $1"; cat $d/summary.md 2>/dev/null || cat $d/state.json; mkdir -p runs/json/$1; cp $d/summary.json $d/options.json runs/json/$1/ 2>/dev/null; find $d -name roofline.json | while read -r f; do cp "$f" runs/json/$1/$(echo "${f#$d/}" | tr / _); done; }
# two_streams LIMIT_S [FUNC...]: runs the caller's functions stream0 (GPU 0's work) and stream1 (GPU 1's) at once,
# each in its own bash under `timeout LIMIT_S` with step, summ and the named helper FUNCs, logging to
# $OUT/gpu0.txt and $OUT/gpu1.txt; waits on both by PID (a bare `wait` also waits for a `tee` process
# substitution, and hangs).
two_streams() {
  local limit=$1; shift
  timeout "$limit" bash -c "$(declare -f step summ "$@" stream0); K=$K; stream0" >"$OUT/gpu0.txt" 2>&1 &
  local p0=$!
  timeout "$limit" bash -c "$(declare -f step summ "$@" stream1); K=$K; stream1" >"$OUT/gpu1.txt" 2>&1 &
  local p1=$!
  wait "$p0" "$p1"
}
# triton_overhead ROWS: the Triton per-candidate overhead (docs/TRITON.md, "The fork server"): golden data for
# the softmax at ROWS x 4096 (kopt bench), then check mode on its 3 seeds, 3 times directly and 4 times through
# the fork server (the first starts it), warm Triton cache; prints each run's wall and phases_ms.
triton_overhead() {
  local TS="examples/triton_softmax/kernel.py --ref examples/triton_softmax/ref.py --n_rows=$1 --n_cols=4096"
  step triton_golden_$1 90 $K bench $TS --measure-budget-s 0.3 --no-reference-timing --out-dir runs/ov$1
  local G; G=$(newest_run ov$1 "bench_*/golden")
  local CFG='{"BLOCK_SIZE":4096,"KOPT_PERSISTENT_KERNEL":0,"num_stages":2,"num_warps":8}'
  export KOPT_TRITON_FORK_SERVER_DIR=/tmp/kopt-fs-device-check
  for m in kopt_harness kopt_harness kopt_harness kopt_harness.fork_client kopt_harness.fork_client kopt_harness.fork_client kopt_harness.fork_client; do
    local t0; t0=$(date +%s.%N)
    env PYTHONPATH=$PWD/python python3 -m $m triton-run --kernel examples/triton_softmax/kernel.py --golden "$G" --out runs/r.json --mode check --config "$CFG" >/dev/null 2>runs/err.txt
    local rc=$?
    echo "overhead $1 $m rc=$rc wall_s=$(python3 -c "import time;print(round(time.time()-$t0,3))") $(python3 -c "import json;d=json.load(open('runs/r.json'));print(d['status'], json.dumps(d.get('phases_ms')))")"
  done
  tail -2 runs/err.txt
}
# tool_log LOG: kopt's Nsight Compute and compute-sanitizer (KOPT_NCU, KOPT_COMPUTE_SANITIZER) become wrappers that
# append each run's start (seconds since this call), seconds, exit code and arguments to LOG, then exit as the tool did.
tool_log() {
  local log=$1 t0 n real; t0=$(date +%s.%N); mkdir -p /tmp/kopt_tool_log
  for n in ncu compute-sanitizer; do
    real=$(command -v "$n") || continue
    cat >"/tmp/kopt_tool_log/$n" <<W
#!/usr/bin/env bash
s=\$(date +%s.%N); "$real" "\$@"; rc=\$?
echo "\$(python3 -c "import time;print('%.3f %.3f'%(\$s-$t0, time.time()-\$s))") rc=\$rc $n \$*" | cut -c1-300 >>"$log"
exit \$rc
W
    chmod +x "/tmp/kopt_tool_log/$n"
  done
  [ -x /tmp/kopt_tool_log/ncu ] && export KOPT_NCU=/tmp/kopt_tool_log/ncu
  [ -x /tmp/kopt_tool_log/compute-sanitizer ] && export KOPT_COMPUTE_SANITIZER=/tmp/kopt_tool_log/compute-sanitizer
  return 0
}
# start_check: the common start of a device check (run from the repository root with the binaries in
# .carry/build): kopt's data, unbuffered Python, K and KOPT_BIN, the date, the GPUs and the commit, runs/json.
start_check() {
  export KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1 KOPT_BIN=$PWD/.carry/build/kopt
  K=$KOPT_BIN
  date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  cat .carry/build/COMMIT 2>/dev/null
  mkdir -p runs/json
}
# finish_check: the date, runs/json as $OUT/runs_json.tgz, and what $OUT holds.
finish_check() {
  date -u
  (cd runs && tar czf "$OUT/runs_json.tgz" json 2>/dev/null)
  ls -la "$OUT"
}
# plain_in LIMIT_S NAME...: scripts/device/plain_check.sh on NAMEs under `timeout LIMIT_S`, its outputs in $OUT/p, then
# its report and $OUT/plain.tgz (the device tool brings back few files).
plain_in() {
  local limit=$1; shift
  local P="$OUT/p"
  mkdir -p "$P"
  OUT="$P" timeout "$limit" bash scripts/device/plain_check.sh "$@"
  echo "=== plain report"
  cat "$P/plain_report.txt" 2>/dev/null
  tar czf "$OUT/plain.tgz" -C "$OUT" p && rm -rf "$P"
}
