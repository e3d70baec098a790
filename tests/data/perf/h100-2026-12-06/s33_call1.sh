#!/usr/bin/env bash
# Session 33, call 1 (issue 36): where the seconds of a cold vector_add run and of sgemm seeds 4-5 go, tool by tool.
#  0. ncu's own costs on a probe kernel: --version, a profile with -o, a profile printing the raw page, an import of
#     the raw and the details pages; whether `-o` and `--page raw --csv` print and export in one run;
#  1. optimize vector_add 2^24 over fresh caches, ncu and compute-sanitizer behind wrappers that log each call's
#     seconds; the run directory's JSON kept (each candidate's measure phases);
#  2. sgemm_tunable 4096^3 seeds 4 and 5 the same way, cut at CUT_S.
set -u
export OUT=${OUT:-$PWD/check_out} KOPT_DATA_DIR=$PWD/data PYTHONUNBUFFERED=1
T0=$(date +%s); TOTAL_S=${TOTAL_S:-500} CUT_S=${CUT_S:-60}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep" runs /tmp/w
. scripts/device/lib.sh
K=$PWD/.carry/build/kopt
NCU=$(command -v ncu); CS=$(command -v compute-sanitizer)
echo "ncu $NCU; compute-sanitizer $CS"
pack() { tar czf "$OUT/s33_call1.tgz" -C "$OUT" keep; }
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
# The wrappers: one line per call (start, seconds, rc, argv) in $OUT/keep/tools.log.
for t in ncu:$NCU cs:$CS; do n=${t%%:*} real=${t#*:}
cat >/tmp/w/$n <<W
#!/usr/bin/env bash
t0=\$(date +%s.%N); "$real" "\$@"; rc=\$?
echo "\$(python3 -c "import time;print('%.3f %.3f'%(\$t0-$T0, time.time()-\$t0))") rc=\$rc $n \$*" | cut -c1-400 >>$OUT/keep/tools.log
exit \$rc
W
chmod +x /tmp/w/$n; done
# 0. ncu on the probe.
cat >/tmp/w/probe.cu <<'C'
#include <cstdio>
__global__ void kopt_probe(float* x){x[threadIdx.x]+=1.0f;}
int main(){float* d; cudaMalloc(&d,1024*sizeof(float)); kopt_probe<<<1,256>>>(d); cudaDeviceSynchronize(); cudaFree(d); return 0;}
C
nvcc -arch=sm_90 -o /tmp/w/probe /tmp/w/probe.cu
tm() { local t0; t0=$(date +%s.%N); "$@" >/tmp/w/o.txt 2>&1; echo "rc=$? $(python3 -c "import time;print('%.2f s'%(time.time()-$t0))") $*" | cut -c1-300; }
tm $NCU --version
tm $NCU --version
tm $NCU --clock-control none --section SpeedOfLight -o /tmp/w/p1 -f /tmp/w/probe
tm $NCU --clock-control none --section SpeedOfLight --csv --page raw /tmp/w/probe; echo "  raw print: $(wc -l </tmp/w/o.txt) lines"
tm $NCU --clock-control none --section SpeedOfLight -o /tmp/w/p2 -f --csv --page raw /tmp/w/probe
echo "  -o with --page raw --csv: $(wc -l </tmp/w/o.txt) lines; report $(ls -la /tmp/w/p2.ncu-rep 2>&1 | cut -c1-80)"; head -c 600 /tmp/w/o.txt; echo
tm $NCU --clock-control none --section SpeedOfLight -o /tmp/w/p3 -f --csv --page raw --print-summary none /tmp/w/probe
echo "  + --print-summary none: $(wc -l </tmp/w/o.txt) lines"
tm $NCU --import /tmp/w/p1.ncu-rep --csv --page raw
tm $NCU --import /tmp/w/p1.ncu-rep --csv --page details
tm $NCU --import /tmp/w/p1.ncu-rep --csv --page details --print-details all
tm $NCU --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis_Chart --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats -o /tmp/w/p4 -f /tmp/w/probe
tm $NCU --query-metrics --chip gh100
pack
export KOPT_NCU=/tmp/w/ncu KOPT_COMPUTE_SANITIZER=/tmp/w/cs
keep_run() {  # keep_run NAME: the run directory's JSON and text (no libraries, reports, golden data)
  local d; d=$(ls -d runs/$1/kopt_runs/*_* 2>/dev/null | head -1); [ -n "$d" ] || return
  (cd "$d/.." && tar czf "$OUT/keep/$1_run.tgz" --exclude='*.so' --exclude='*.ncu-rep' --exclude='*.safetensors' --exclude='*.cubin' --exclude='*.o' "$(basename "$d")")
  python3 - "$d/state.json" "$1" <<'PY' 2>/dev/null
import json, sys
s = json.load(open(sys.argv[1])); w = s.get("wall") or {}; best = 3.018464
line = f"{sys.argv[2]}: wall " + str({k: round(v, 1) for k, v in w.items() if v is not None})
line += " phases " + str({k: round(v, 1) for k, v in (s.get("phase_seconds") or {}).items()})
if "sg" in sys.argv[2]:
    hit = [h for h in s["history"] if h.get("median_ms") and h.get("status", "ok") == "ok" and h["median_ms"] <= best * 1.03]
    first = min((h.get("search_s", 0) for h in hit), default=None)
    line += f" evaluations {len(s['history']) - 1}; first within 3% at search_s {first}"
    if first is not None and w.get("gates_s") is not None: line += f" -> whole {w['gates_s'] + first:.1f} s"
print(line)
PY
}
opt() {  # opt NAME LIMIT ENV... -- ARGS
  local name=$1 limit=$2; shift 2; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  [ "$(left)" -gt $((limit + 5)) ] || { echo "$name: not started ($(left) s left)"; return; }
  echo "--- $name at $(( $(date +%s) - T0 )) s" >>$OUT/keep/tools.log
  ( env "${envs[@]}" timeout -s INT "$limit" $K optimize "$@" --out-dir "runs/$name" </dev/null 2>&1 | stamp >"$OUT/keep/$name.log" )
  echo "[$(( $(date +%s) - T0 )) s] $(grep -h 'gates passed' "$OUT/keep/$name.log" | tr -s ' ' | cut -c1-120)"
  keep_run "$name"; pack
}
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
rm -rf ~/.cache/kopt/doctor
KNEW=$K
K=$PWD/.carry/build/kopt_old; opt va_cold_old 100 KOPT_CACHE_DIR=$PWD/runs/cache_va_old -- $VA
K=$KNEW; rm -rf ~/.cache/kopt/doctor; opt va_cold 100 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
opt va_warm 60 KOPT_CACHE_DIR=$PWD/runs/cache_va -- $VA
for s in 4 5; do opt "sg_s$s" "$CUT_S" "KOPT_CACHE_DIR=$PWD/runs/cache_s$s" -- $ST --search-seed "$s"; done
cat $OUT/keep/tools.log | cut -c1-220
pack; date -u
