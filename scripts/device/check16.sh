#!/usr/bin/env bash
# Device check 16 (2026-12-01, nvidia-h200): the kernel clock (CUPTI) in the timing side by side (timing_check.sh,
# issue 17), the shapes and safety gates (gates_check.sh, issue 18), then Kernel Tuner's T4 reader on an export of
# the gates' vector_add run (issue 20).
# Prepare here: cmake --build build && bash scripts/device/carry_build.sh && bash scripts/device/carry_timing.sh
# Run there: bash scripts/device/check16.sh   (carry [".carry", ".whl"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
cat .carry/build/COMMIT
timeout 240 bash scripts/device/timing_check.sh
mv "$OUT/runs_json.tgz" "$OUT/timing_runs_json.tgz" 2>/dev/null
timeout 330 bash scripts/device/gates_check.sh
mv "$OUT/runs_json.tgz" "$OUT/gates_runs_json.tgz" 2>/dev/null
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
RUN=$(ls -d runs/va/kopt_runs/run_* 2>/dev/null | head -1)
if [ -n "$RUN" ]; then
  step export_t4 30 $K export "$RUN" --format t4 --out runs/t4.json
  step t4_kernel_tuner 60 python3 scripts/device/t4_check.py runs/t4.json
  [ -s "$RUN/summary.html" ] && echo "CHECK summary.html written by optimize: yes ($(stat -c %s "$RUN/summary.html") bytes)"
fi
finish_check
