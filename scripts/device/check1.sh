#!/usr/bin/env bash
# Device check 1: doctor, the runner's GPU tests, and Nsight Compute captures for the profile parsers.
set -u
B=.carry/build
mkdir -p $OUT/cap
exec > >(tee $OUT/log.txt) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
echo "== doctor"; time $B/kopt doctor --json $OUT/doctor.json; echo "doctor rc=$?"
echo "== gpu tests"; $B/kopt_tests --gtest_filter='*Gpu*' 2>&1 | tail -60
echo "== ncu captures"
V=$(ncu --version | grep -o 'Version [0-9.]*' | cut -d' ' -f2)
C=$OUT/cap; nvcc -arch=sm_90 -O3 -lineinfo -o /tmp/twok tests/data/profile/ncu-2025.3.1/twok.cu && /tmp/twok
T0=$(date +%s.%N)
ncu --clock-control none --profile-from-start off --section SpeedOfLight --section LaunchStats --section Occupancy -o $C/pass1 -f /tmp/twok
T1=$(date +%s.%N)
ncu --clock-control none --profile-from-start off --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy --section SpeedOfLight -o $C/pass2 -f /tmp/twok
T2=$(date +%s.%N)
echo "pass1 $(echo "$T1-$T0"|bc) s, pass2 $(echo "$T2-$T1"|bc) s"
for p in pass1 pass2; do ncu --import $C/$p.ncu-rep --csv --page raw > $C/${p}_raw.csv; ncu --import $C/$p.ncu-rep --csv --page details > $C/${p}_details.csv; done
ncu --import $C/pass2.ncu-rep --csv --page details --print-details all > $C/pass2_details_all.csv 2>&1 || true
ncu --query-metrics --chip gh100 > $C/query_metrics_gh100.txt 2>&1
ncu --list-sections > $C/list_sections.txt 2>&1
echo "$V" > $C/ncu_version.txt
wc -l $C/*.csv $C/*.txt
(cd $OUT && tar czf ncu-$V-captures.tgz cap && rm -rf cap)
ls -la $OUT
