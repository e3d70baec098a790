#!/usr/bin/env bash
# Device check: the run as a web page and the interop exports (issue 20, items 1, 2 and 6), on one H200.
#   1. optimize sgemm_tunable (2 iterations): the run directory must hold summary.html (written by the loop);
#   2. kopt report --html on it, and the page opened in headless Chromium if the machine has one (it usually has
#      not: then the test says "SKIP");
#   3. kopt export --format t4 | csv, and the T4 file read by Kernel Tuner (scripts/device/t4_check.py, with the
#      kernel-tuner wheel carried in .carry/wheels);
#   4. kopt compare of the run with itself;
#   5. the run directory without its bulky files as $OUT/run_sgemm_h200_real.tgz: a real recorded run for
#      tests/data/report (it replaces the synthetic-structure fixture there; see tests/data/report/README.md).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
python3 -c "import kernel_tuner" 2>/dev/null ||
  step install_kernel_tuner 300 python3 -m pip install -q --no-index --find-links .carry/wheels kernel-tuner
step optimize 600 $K optimize examples/sgemm_tunable/kernel.cu --ref examples/sgemm_tunable/ref.py --M=4096 --N=4096 --K=4096 \
  --iterations 2 --out-dir runs/report </dev/null >runs/optimize.log 2>&1
tail -30 runs/optimize.log
RUN=$(newest_run report)
echo "run directory: $RUN"
ls -la "$RUN"
if [ -s "$RUN/summary.html" ]; then echo "CHECK summary.html written by optimize: yes ($(stat -c %s "$RUN/summary.html") bytes)"
else echo "CHECK summary.html written by optimize: NO"; fi
step report_html 60 $K report --html "$RUN"
step browser 120 python3 tests/report/check_report_page.py --kopt $K --run "$RUN" --screenshot "$OUT/summary_h200.png"
step export_t4 60 $K export "$RUN" --format t4 --out runs/t4.json
step export_csv 60 $K export "$RUN" --format csv --out "$OUT/run.csv"
step t4_kernel_tuner 120 python3 scripts/device/t4_check.py runs/t4.json
step exports_schema 120 python3 tests/report/check_exports.py --kopt $K --run "$RUN" --schema tests/data/report/t4/results-schema.json
step compare 60 $K compare "$RUN" "$RUN"
cp "$RUN/summary.html" "$OUT/summary_h200.html" 2>/dev/null
# The recorded run, small: no golden data, libraries, cubins, Nsight Compute reports or build trees.
tar czf "$OUT/run_sgemm_h200_real.tgz" -C "$(dirname "$RUN")" --exclude=golden --exclude='*.so' --exclude=cubins \
  --exclude='*.ncu-rep' --exclude=build --exclude=summary.html "$(basename "$RUN")"
echo "recorded run: $(stat -c %s "$OUT/run_sgemm_h200_real.tgz") bytes compressed"
finish_check
