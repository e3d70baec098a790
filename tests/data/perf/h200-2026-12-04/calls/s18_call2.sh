#!/usr/bin/env bash
# Call 2 (session 18): where the warm bench worker's measure goes, then the corpus benchmark on 4 kernels.
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
VA="examples/vector_add/kernel.cu --ref examples/vector_add/ref.py --n=16777216"
ST="examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096"
mkdir -p runs
{
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s.%N)
b() { local tag=$1; shift; local s=$(date +%s.%N); timeout 150 "$K" bench "$@" --out-dir runs/$tag >runs/$tag.log 2>&1; echo "=== $tag rc=$? $(python3 -c "import time;print(round(time.time()-$s,2))") s"; }
b bwv0 $VA
for i in 2 3 4 5; do b bwv$i $VA -DITEMS=$i; done
b bws0 $ST
i=0; for d in "-DBM=128" "-DBN=128 -DTM=8" "-DBM=128 -DBN=128 -DTN=8" "-DTM=4"; do i=$((i+1)); b bws$i $ST $d; done
for i in 2 3; do KOPT_BENCH_WORKER=off b bwn$i $VA -DITEMS=$i; done
python3 - <<'PY'
import json, glob
for d in sorted(glob.glob("runs/bw*/kopt_runs/bench_*/bench.json")):
    j = json.load(open(d))
    keep = ("wall_s", "phase_seconds", "measure_phases_ms", "measure_request_ms", "measure_worker_ms", "measure_wall_ms", "measure_startup_ms")
    w = j.get("warm_worker", {})
    print(d.split("/")[1], json.dumps({k: j.get(k) for k in keep}), "worker", w.get("used"), w.get("reused"), w.get("measuring_process_reused"))
PY
echo "bench part: $(python3 -c "import time;print(round(time.time()-$t0,1))") s"
} 2>&1 | tee $OUT/bench_worker.txt
mkdir -p runs/bwjson; for d in runs/bw*/kopt_runs/bench_*; do cp $d/bench.json runs/bwjson/$(echo $d | cut -d/ -f2).json 2>/dev/null; done
tar czf $OUT/bench_worker_json.tgz runs/bwjson
CB_DEADLINE_S=${CB_DEADLINE_S:-390} CB_MIN_KERNEL_S=85 CB_OPT_LIMIT_S=75 timeout 430 bash scripts/device/check.sh corpus-bench flashinfer_rmsnorm cutlass_layernorm flashinfer_silu_and_mul flashinfer_online_softmax > $OUT/corpus_bench.txt 2>&1
echo "corpus rc=$?"; tail -30 $OUT/corpus_bench.txt
