#!/usr/bin/env bash
set -u
export OUT=${OUT:-$PWD/check_out}
K=$PWD/.carry/build/kopt
mkdir -p runs/json; T0=$(date +%s)
echo "=== hostile $(date -u)"
for k in vadd_ok vadd_slow vadd_slow_memo_pointer vadd_slow_memo_fingerprint vadd_slow_memo_hash vadd_late_thread vadd_resident_thread vadd_l2_persist vadd_two_kernels vadd_side_stream vadd_answer_key; do
  for w in on off; do
    KOPT_BENCH_WORKER=$w timeout 40 "$K" bench tests/data/kernels/$k.cu --ref examples/vector_add/ref.py --n=1048576 --no-reference-timing --measure-budget-s 1 --json runs/json/bw_${k}_$w.json --out-dir runs/bw_$k >/dev/null 2>&1
  done
  python3 -c "
import json,sys
def v(w):
  try: j=json.load(open(f'runs/json/bw_{sys.argv[1]}_{w}.json'))
  except Exception as e: return ('unreadable',)
  return (j['outcome'].get('status'), ','.join(j.get('flags',[])), (j.get('rejected') or {}).get('rule',''), j.get('warm_worker',{}).get('used'))
a,b=v('on'),v('off'); print('hostile %-28s on %s off %s %s' % (sys.argv[1], a, b, 'SAME' if a[:3]==b[:3] else 'DIFFERENT'))" $k
done
echo "=== call-ms [$(( $(date +%s) - T0 )) s]"
TK=scripts/device/timing_kernels
cb() { local tag=$1; shift; env "$@" timeout 40 "$K" bench $TK/axpb/kernel.cu --ref $TK/axpb/ref.py --n=1048576 --seeds 1 --no-reference-timing --measure-budget-s 2 --no-worker --json runs/json/call_$tag.json --out-dir runs/call >/dev/null 2>&1; python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['outcome']; ti=o['details'].get('timing_info',{}); print('call_ms %-16s gpu_ms %.5f call_ms %.5f clock %s' % (sys.argv[2], o['timing']['median_ms'], o['call']['median_ms'], ti.get('gpu_clock')))" runs/json/call_$tag.json $tag; }
for r in 1 2; do cb clock$r KOPT_X=1; cb events$r KOPT_CUPTI=0; cb clock_nofresh$r KOPT_FRESH_INPUTS=0; cb events_nofresh$r KOPT_FRESH_INPUTS=0 KOPT_CUPTI=0; done
echo "=== done [$(( $(date +%s) - T0 )) s]"
tar czf $OUT/call4_json.tgz runs/json 2>/dev/null
