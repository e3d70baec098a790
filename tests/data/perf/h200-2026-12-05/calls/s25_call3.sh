#!/usr/bin/env bash
# Session 25, call 3: issue 38's remaining H200 check, the GPU suite (scripts/gpu_suite.sh's 22 end-to-end tests:
# bench, sass, profile and optimize per example, every backend) on the current build, last run on 11-30 (450c027);
# about 9 minutes on one H200. Its table and the failing tests' tails are packed into one file.
# Carry: .carry/build/kopt, .carry/build/COMMIT, .carry/cutlass.tgz, this script as .carry/call3.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
mkdir -p "$OUT/keep"
timeout 570 bash scripts/device/check.sh gpu-suite 2>&1 | tee "$OUT/keep/gpu_suite.log" | grep -E "exit|passed|failed" | tail -30
tar czf "$OUT/s25_call3.tgz" -C "$OUT" keep && rm -rf "$OUT/keep" "$OUT"/runs_json_*.tgz
echo "=== end [$(( $(date +%s) - T0 )) s]"
