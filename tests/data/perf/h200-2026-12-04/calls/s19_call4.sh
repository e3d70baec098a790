#!/usr/bin/env bash
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
(cd python && KOPT_BIN=$K timeout 120 python3 -m pytest -q -s tests/test_triton_gpu.py -k honest_triton_kernel_on_the_ephemeral 2>&1) > $OUT/t.log
grep -E "evidence|passed|failed" $OUT/t.log | cut -c1-3000
find /tmp/pytest-of-root -name "ephemeral_check.json" -exec cp {} $OUT/ \; -exec python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('status'), d.get('message'), json.dumps(d.get('seeds',[{}])[-1])[:1500])" {} \;
