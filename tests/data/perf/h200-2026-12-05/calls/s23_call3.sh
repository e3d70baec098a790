#!/usr/bin/env bash
# Call 3 (session 23, 04:03 UTC, db08141, 74 s): the num_warps helper of an imported Triton kernel's launch on the
# H200 (src/search/derive_triton.cpp own_num_warps): fla's autotuned softmax at num_warps 0 (the project's autotune)
# and 4 (its config pinned without the autotuner), Liger's plain-jit RoPE at 8. Carry: .carry/build/kopt,
# .carry/build/COMMIT, examples/corpus/_fetched. Output: triton/s23_call3_triton_helper.log.
export KOPT_DATA_DIR=$PWD/data; K=.carry/build/kopt; L=$OUT/triton_helper.log; T0=$(date +%s)
for n in fla_softmax liger_rope; do $K annotate examples/corpus/$n/kernel.py --write examples/corpus/$n/kernel_kopt.py >>$L 2>&1; done
run() { echo "=== [$(( $(date +%s)-T0 ))s] $*" >>$L; timeout 70 $K bench "$@" --measure-budget-s 0.3 --no-reference-timing >>$L 2>&1; echo "rc=$?" >>$L; }
run examples/corpus/fla_softmax/kernel_kopt.py --ref examples/corpus/fla_softmax/ref.py --N=4096 --D=4096 -Dnum_warps=0
run examples/corpus/fla_softmax/kernel_kopt.py --ref examples/corpus/fla_softmax/ref.py --N=4096 --D=4096 -Dnum_warps=4
run examples/corpus/liger_rope/kernel_kopt.py --ref examples/corpus/liger_rope/ref.py --batch=2 --seq_len=4096 --n_q_head=32 --n_kv_head=8 --head_dim=128 -Dnum_warps=8
