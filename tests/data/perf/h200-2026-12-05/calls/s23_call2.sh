#!/usr/bin/env bash
# Call B (session 23), at db08141: issue 38's "the same decisions": one optimize per backend (reduction 2^24 CUDA,
# cutlass_gemm 2048^3 CUTLASS, triton_softmax 4096 x 4096 Triton; search seed 7, no database) by the builds before
# and after the loop split (p0 = 5266cef, p1 = a55e507: 8de0f98..a55e507, four "no behaviour change" commits), and
# the CUDA one by the builds before and after the run outcome and typed report (q0 = 07b6d7d, q1 = 25e4fa8);
# kopt compare (db08141) names each pair's differences.
# Carry: .carry/build/kopt, .carry/build/COMMIT, .carry/builds.txz (bash scripts/device/pack_builds.sh p0:... p1:...
# q0:... q1:...), .carry/cutlass.tgz, this script as .carry/call_b.sh.
set -u
export OUT=${OUT:-$PWD/check_out}
T0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .carry/build/COMMIT
DEC_ONLY_q0=reduction DEC_ONLY_q1=reduction DEC_LIMIT_S=150 timeout 570 bash scripts/device/check.sh decisions p0 p1 q0 q1 2>&1 | tail -80
echo "=== end [$(( $(date +%s) - T0 )) s]"
