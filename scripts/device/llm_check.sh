#!/usr/bin/env bash
# Device check (issue 19): language models as generators, on one H200, in about three minutes.
#   1. A mock OpenAI-compatible endpoint (tests/data/llm/mock_endpoint.py, Python stdlib) on this machine's loopback
#      serves scripted rewrites of examples/sgemm_naive (scripts/device/llm/sgemm_conversation.json): iteration 1 a
#      candidate that does not compile and then its fix (shared-memory tiles) plus register tiles; iteration 2
#      float4 slice loads, and a candidate with wrong results and then its fix. `kopt llm-check`, then
#      `kopt optimize --generator llm` against it (with a key, checked never to land in the run directory).
#   2. `kopt optimize --generator manual`, answered by examples/generators/answer_briefs.py with the same rewrites.
# Both must reach a verified champion (not the baseline; vectorized_access confirmed in the SASS); the llm run's
# summary must show requests, repairs and tokens. Run from the repository root with the binaries in .carry/build.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_check
echo "--- libcurl here (kopt loads it at run time for --generator llm):"
ldconfig -p | grep -E "libcurl(-gnutls)?\.so\.4" || echo "no libcurl.so.4 on this machine"
echo "--- ldd kopt:"; ldd "$K"

DIMS="examples/sgemm_naive/kernel.cu --ref examples/sgemm_naive/ref.py --M=2048 --N=2048 --K=2048"
LOOP="--iterations 2 --branches 2 --finalists 1 --measure-budget-s 0.5"
export KOPT_LLM_API_KEY=sk-device-check-not-a-real-key

python3 tests/data/llm/mock_endpoint.py --script scripts/device/llm/sgemm_conversation.json --port-file runs/mock_port \
  --log "$OUT/mock_requests.jsonl" --max-seconds 400 >"$OUT/mock.txt" 2>&1 &
MOCK=$!
for _ in $(seq 100); do [ -s runs/mock_port ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat runs/mock_port)/v1"
echo "mock endpoint: $URL (pid $MOCK)"

step "llm-check" 30 "$K" llm-check --llm-url "$URL" --llm-model mock-coder
step "optimize --generator llm" 240 "$K" optimize $DIMS $LOOP --generator llm --llm-url "$URL" --llm-model mock-coder \
  --llm-concurrency 2 --llm-repairs 2 --out-dir runs/llm </dev/null
summ llm
kill "$MOCK" 2>/dev/null

python3 examples/generators/answer_briefs.py --runs runs/manual --variants examples/generators/sgemm_rewrites \
  --max-seconds 260 >"$OUT/answer_briefs.txt" 2>&1 &
ANSWER=$!
step "optimize --generator manual" 240 "$K" optimize $DIMS $LOOP --generator manual --manual-timeout-s 120 \
  --out-dir runs/manual </dev/null
summ manual
kill "$ANSWER" 2>/dev/null

# The verdicts, from the run directories themselves.
for r in llm manual; do
  d=$(newest_run $r)
  [ -n "$d" ] || { echo "VERDICT $r: no run directory"; continue; }
  python3 - "$d" "$r" <<'EOF'
import glob, json, os, sys
d, name = sys.argv[1], sys.argv[2]
s = json.load(open(os.path.join(d, "summary.json")))
h = s.get("headline", {})
champ = h.get("champion_id", "?")
sass = {}
for f in sorted(glob.glob(os.path.join(d, "iter_*", "sass_verification.json"))):
    sass.update({m: v.get("status") for m, v in json.load(open(f)).get("methods", {}).items()})
print("VERDICT %s: champion %s, %.4g ms vs baseline %.4g ms (x%.2f); stop %s; methods %s; SASS %s" % (
    name, champ, h.get("champion_ms", 0), h.get("baseline_ms", 0), h.get("speedup_vs_baseline", 0),
    s.get("stop", {}).get("reason"), json.dumps(s.get("methods", {}).get("effective", [])), json.dumps(sass)))
print("VERDICT %s: verified champion: %s" % (name, champ not in ("?", "baseline") and sass.get("vectorized_access") == "pass"))
usage = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(d, "iter_*", "llm_usage.json")))]
if usage:
    t = {k: sum(u["totals"].get(k, 0) for u in usage) for k in
         ("requests", "repair_requests", "repaired", "retries", "prompt_tokens", "completion_tokens", "accepted", "failed")}
    print("VERDICT %s: llm_usage.json totals %s" % (name, json.dumps(t)))
    print("VERDICT %s: summary.json has the llm fragment: %s" % (name, json.dumps(s.get("llm", {}).get("totals"))))
EOF
done
echo "--- the key in any file of the llm run (expect none):"
grep -rl "$KOPT_LLM_API_KEY" runs/llm && echo "KEY LEAKED" || echo "key found nowhere"
cp -r runs/llm/kopt_runs/run_*/iter_01/llm "$OUT/llm_iter01" 2>/dev/null
finish_check
