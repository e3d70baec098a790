#!/usr/bin/env bash
# Device check 14 (2026-12-01, nvidia-h200): issue 17's timing side by side (timing_check.sh: kopt bench, Nsight
# Compute, nvbench; the runner's GPU tests), issue 19's language-model and manual generators (llm_check.sh), then
# issue 20's page and exports on the llm run's directory (summary.html written by optimize, the page in Chromium
# if the machine has one, kopt export t4/csv, the T4 file read by the installed Kernel Tuner, kopt compare).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh && bash scripts/device/carry_timing.sh
#   and the Kernel Tuner wheels in .whl (docs/PERFORMANCE.md, "Peers").
# Run there: bash scripts/device/check14.sh   (carry [".carry", ".whl"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
timeout 330 bash scripts/device/timing_check.sh
mv "$OUT/runs_json.tgz" "$OUT/timing_runs_json.tgz" 2>/dev/null
timeout 230 bash scripts/device/llm_check.sh
mv "$OUT/runs_json.tgz" "$OUT/llm_runs_json.tgz" 2>/dev/null
echo "=== issue 20 on the llm run"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
RUN=$(ls -d runs/llm/kopt_runs/run_* 2>/dev/null | head -1)
if [ -n "$RUN" ]; then
  if [ -s "$RUN/summary.html" ]; then echo "CHECK summary.html written by optimize: yes ($(stat -c %s "$RUN/summary.html") bytes)"
  else echo "CHECK summary.html written by optimize: NO"; fi
  step report_html 60 $K report --html "$RUN"
  step export_t4 60 $K export "$RUN" --format t4 --out runs/t4.json
  step export_csv 60 $K export "$RUN" --format csv --out runs/run.csv
  step t4_kernel_tuner 120 python3 scripts/device/t4_check.py runs/t4.json
  step compare 60 $K compare "$RUN" "$RUN"
  cp "$RUN/summary.html" "$OUT/summary_llm_h200.html" 2>/dev/null
fi
finish_check
