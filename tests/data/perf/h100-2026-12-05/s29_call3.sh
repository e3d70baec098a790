set -u
date -u; nvidia-smi --query-gpu=name --format=csv,noheader; git log --oneline -1 2>/dev/null || true
KOPT_GPU_SUITE_DIR=$PWD/runs/suite3 timeout 200 bash scripts/gpu_suite.sh optimize triton_softmax 2>&1 | tail -2
python3 - <<'PY'
import glob, json
for f in sorted(glob.glob("runs/suite3/optimize_triton_softmax/kopt_runs/*/iter_01/candidates/*/run.json"))[:2]:
    d = json.load(open(f))
    print(f.split("/")[-2], "timed child", d["phases_ms"]["total"], [(c["status"], c["phases_ms"]) for c in d.get("cases", [])])
PY
