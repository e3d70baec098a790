#!/usr/bin/env bash
# The corpus benchmark (issue 35, item 4): for each corpus kernel with a space `kopt annotate` derives, (i) kopt's
# default `optimize` with a search budget (`--time-budget`, and a hard cap by SIGINT), (ii) the exhaustive sweep of
# the same derived space (every configuration timed by kopt's paired runner, scripts/perf/measure_space.py) and
# (iii) the project's own choice (the derived space's default point, which is the project's launch: `0` of a
# derived block means "the launcher's own value"; also timed by `kopt bench` of the kernel as it is), and (iv) the
# sweep again at each other case of the optimize's workload matrix (its default objective weighs the dims x1, x0.75
# and x0.5 by 0.5/0.3/0.2: corpus_table.py holds the champion to the sweep's best by that objective; CB_CASES=off skips
# it, about 40 s a CUDA kernel).
#
#   bash scripts/device/corpus_bench.sh prepare [NAME...]   here, no GPU: annotate, enumerate and compile every
#                                                           configuration into .carry/corpus_bench.txz (xz: the
#                                                           libraries share most of their bytes)
#   bash scripts/device/corpus_bench.sh plan [NAME...]      no GPU: unpack that pack, check it against what this kopt
#                                                           derives now, print the plan and the configuration counts
#   bash scripts/device/check.sh corpus-bench [NAME...]     on the GPU machine (this script's `run`)
#
# Carry: .carry/build (a stripped kopt), .carry/cutlass.tgz (bash scripts/carry_cutlass.sh), .carry/corpus_bench.txz
# and examples/corpus/_fetched (scripts/corpus/fetch.py). A kernel missing from the pack is compiled there (all
# cores), which costs device time.
#
# Budget: the whole run stops starting kernels when fewer than CB_MIN_KERNEL_S (default 100) seconds are left before
# CB_DEADLINE_S (default 470) from its start; kernels run in the order given (default: CB_DEFAULT below, CUDA only,
# by priority), so what is skipped is the tail, and says so. Per kernel: optimize with --time-budget CB_TIME_BUDGET_S
# (default 40: the search's seconds after the gates; 15 cut flashinfer_rmsnorm's 35 points after its first iteration, at
# 1.082 of the best, and 40 reached 1.002; `none`: kopt's default optimize, no search budget, as a user runs it) under `timeout -s INT CB_OPT_LIMIT_S` (default 100, a Triton kernel 160; with `none` 150 and 240; at most the
# time left minus 40 s; an interrupted run still writes state.json), then kopt bench (the project's choice, and the
# sweep's golden data: optimize's 3 seeds at the same dims, which kopt's golden cache may serve), then the sweep (7
# rounds, chunks of 48; a Triton kernel's: plain_sweep_triton.py's chunks of CB_TRITON_CHUNK, default 12; 1 where most
# points are wrong, as fla_chunk_local_cumsum's BT other than 64: a chunk holding one fails and is split or run again).
# CB_DIMS=typical runs every kernel at its dims.txt `typical:` dims instead of the reduced dims below; CB_DIMS_NAME (e.g.
# CB_DIMS_flashinfer_rmsnorm="--batch_size=4096 --d=8192") runs NAME at those dims. CB_STEPS (default "optimize bench
# sweep") names the steps run: "bench sweep" measures the space at other dims without an optimize (the warm start's
# tables, docs/DATABASE.md "Warm start"); without bench the sweep takes the optimize's golden data (before 2026-12-06
# only the optimize step obeyed it: session 32's calls ran a bench and a sweep they had not asked for).
#
# Outputs: $OUT/corpus_bench/NAME/ as each step ends (kernel.json: dims, flags, caps, each step's rc and seconds;
# annotate.txt; optimize.log (each line stamped with its second), state.json, summary.json, options.json, summary.md, golden_stream.log; bench.log, bench.json; sweep.log,
# measurements.csv (a Triton sweep cut by its limit: measurements.partial.csv), failures.txt, costs.csv; configs.txt, annotated.cu), re-packed into $OUT/corpus_bench.tgz after
# every kernel; at the end $OUT/corpus_table.md (scripts/perf/corpus_table.py) and the folder is removed (the tgz
# holds it).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
. "$HERE/lib.sh"  # stamp, corpus_kernel, corpus_dims
cd "$ROOT"

# The default kernels, in the order they run: every CUDA kernel whose space is derived (15 of 28 corpus kernels
# have one; the Triton seven are left out by default: their candidates cost 1.5-3 s each, too slow for one call).
CB_DEFAULT="flashinfer_rmsnorm cutlass_layernorm flashinfer_silu_and_mul flashinfer_online_softmax flashinfer_merge_state cutlass_rmsnorm flashinfer_fused_add_rmsnorm flashinfer_gelu_tanh_and_mul"
# Triton kernels accepted by name (their derived space is small, 7-35 points); measured with plain_sweep_triton.py. The
# last five derive only num_warps of an imported kernel's launch (0: the project's own; docs/ANNOTATIONS.md).
CB_TRITON="liger_softmax liger_rms_norm liger_layer_norm liger_geglu liger_swiglu fla_chunk_local_cumsum fla_softmax fla_logsumexp fla_logcumsumexp liger_dyt liger_rope"

# bench_dims NAME: the dims of the benchmark. Reduced from dims.txt's typical dims where the typical launch moves
# more than ~300 MB a call: the golden data of kopt's default workload matrix (3 cases x 3 seeds, made on the GPU
# machine) and the gates' sanitizer then take most of a minute, which one call cannot afford for 8 kernels. Each
# reduced size still takes >= ~0.02 ms a call (the kernel clock resolves that to < 1%) and keeps the project's launch
# choice (it depends on the hidden size, which is kept).
bench_dims() {
  local own="CB_DIMS_$1"
  if [ -n "${!own:-}" ]; then echo "${!own}"; return; fi
  if [ "${CB_DIMS:-}" = typical ]; then corpus_dims "$1" typical; return; fi
  case "$1" in
    flashinfer_rmsnorm | flashinfer_fused_add_rmsnorm) echo "--batch_size=8192 --d=4096" ;;   # typical 16384 x 4096
    cutlass_layernorm | cutlass_rmsnorm) echo "--M=8192 --N=4096" ;;                          # typical 16384 x 4096
    flashinfer_silu_and_mul | flashinfer_gelu_tanh_and_mul) echo "--num_tokens=2048 --d=14336" ;;  # typical 8192 tokens
    flashinfer_merge_state) echo "--seq_len=4096 --num_heads=32 --head_dim=128" ;;           # typical 8192 positions
    # Triton: liger_rms_norm at its typical 16384 x 4096 spent 19 s on golden data and outlasted a 100 s cap in its
    # gates (s21 call 3); a quarter of the rows keeps the launch (it depends on n_cols).
    liger_softmax | liger_rms_norm | liger_layer_norm) echo "--n_rows=4096 --n_cols=4096" ;;  # typical 16384 rows
    liger_geglu) echo "--n_rows=2048 --n_cols=16384" ;;                                       # typical 8192 rows
    liger_swiglu) echo "--n_rows=2048 --n_cols=14336" ;;                                      # typical 8192 rows
    *) corpus_dims "$1" typical ;;
  esac
}

now() { date +%s.%N; }
secs() { python3 -c "import sys;print(round(float(sys.argv[2])-float(sys.argv[1]),1))" "$1" "$2"; }

check_names() {  # exit 2 on a name that is not a corpus kernel this benchmark knows
  local n
  for n in "$@"; do
    case " $CB_DEFAULT $CB_TRITON " in
      *" $n "*) ;;
      *) echo "corpus-bench: '$n' is not a benchmarked corpus kernel (CUDA: $CB_DEFAULT; Triton: $CB_TRITON)" >&2; return 2 ;;
    esac
  done
}

KOPT="${KOPT_BIN:-}"
[ -n "$KOPT" ] || for c in "$ROOT/build/kopt" "$ROOT/.carry/build/kopt"; do [ -x "$c" ] && { KOPT=$c; break; }; done
export KOPT_DATA_DIR="${KOPT_DATA_DIR:-$ROOT/data}" PYTHONUNBUFFERED=1
PACK=.carry/corpus_bench.txz

# compile_space DIR NAME JOBS: every configuration of DIR/configs.txt compiled from DIR/annotated.cu into the build
# cache DIR/../cache, its compile JSON in DIR/compiled/I.json (what measure_space.py reads).
compile_space() {
  local d=$1 n=$2 jobs=$3 flags
  flags="$(corpus_dims "$n" flags) -I examples/corpus/$n"   # the annotated copy lives elsewhere: its "../_fetched" includes
  mkdir -p "$d/compiled"
  # shellcheck disable=SC2016  # $0..$4 belong to the inner shell
  awk '{print NR - 1 " " $0}' "$d/configs.txt" | tr '\n' '\0' | xargs -0 -P "$jobs" -n 1 sh -c '
    i="${4%% *}"; defines="${4#* }"
    # shellcheck disable=SC2086
    "$0" sass "$1" --compile-only $defines $3 --cache-dir "$2/../cache" --json "$2/compiled/$i.json" >"$2/compiled/$i.log" 2>&1 ||
      echo "compile failed: $i: $defines" >&2
  ' "$KOPT" "$d/annotated.cu" "$d" "$flags"
}

# derive DIR NAME: kopt annotate's copy, its JSON and the space's configurations (CUDA: kopt_space.py).
derive() {
  local d=$1 n=$2 k; k=$(corpus_kernel "$n")
  mkdir -p "$d"
  "$KOPT" annotate "$k" --write "$d/annotated.${k##*.}" --json "$d/derived.json" >"$d/annotate.txt" 2>&1 ||
    { echo "corpus-bench: kopt annotate failed on $k"; cat "$d/annotate.txt"; return 1; }
  if [ "${k##*.}" = cu ]; then python3 scripts/perf/kopt_space.py "$d/annotated.cu" >"$d/configs.txt"; fi
}

cmd_prepare() {
  local names=("$@") n d t0 ok jobs
  [ ${#names[@]} -gt 0 ] || read -r -a names <<<"$CB_DEFAULT"
  check_names "${names[@]}" || return 2
  [ -x "$KOPT" ] || { echo "corpus-bench: no kopt (build/kopt or KOPT_BIN)" >&2; return 1; }
  jobs=${CB_JOBS:-$(nproc)}
  rm -rf .carry/corpus_bench && mkdir -p .carry/corpus_bench/cache
  for n in "${names[@]}"; do
    [ "$(corpus_kernel "$n")" = "examples/corpus/$n/kernel.cu" ] || { echo "prepare: $n is Triton: nothing to compile"; continue; }
    d=.carry/corpus_bench/$n
    derive "$d" "$n" || return 1
    t0=$(now)
    compile_space "$d" "$n" "$jobs"
    ok=$(grep -l '"status": "ok"' "$d"/compiled/*.json 2>/dev/null | wc -l)
    echo "prepare $n: $(wc -l <"$d/configs.txt") configurations, $ok compiled in $(secs "$t0" "$(now)") s ($jobs jobs)"
  done
  # Keep only what measure_space.py needs: the libraries, made relative to the pack's folder (@CB@ on the way).
  python3 - .carry/corpus_bench <<'PY'
import glob, json, os, sys
root = os.path.abspath(sys.argv[1])
for f in glob.glob(os.path.join(root, "*", "compiled", "*.json")):
    j = json.load(open(f))
    for o in (j, j.get("compile") or {}):
        for k in ("library", "log_path"):
            if isinstance(o.get(k), str) and os.path.abspath(o[k]).startswith(root):
                o[k] = "@CB@" + os.path.abspath(o[k])[len(root):]
    json.dump(j, open(f, "w"), indent=1)
PY
  find .carry/corpus_bench/cache -name compile.log -delete
  rm -rf .carry/corpus_bench/cache/tmp
  tar cJf "$PACK" -C .carry corpus_bench && ls -la "$PACK" && du -sh .carry/corpus_bench
}

# unpack: the pack into runs/cb_pack with absolute library paths (on the machine that runs it).
unpack() {
  [ -f "$PACK" ] || { echo "corpus-bench: no $PACK (bash scripts/device/corpus_bench.sh prepare here; carry it): compiling there"; return 0; }
  rm -rf runs/cb_pack && mkdir -p runs/cb_pack
  python3 - "$PACK" runs/cb_pack <<'PY'
import glob, os, sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    t.extractall(sys.argv[2])
root = os.path.abspath(os.path.join(sys.argv[2], "corpus_bench"))
n = 0
for f in glob.glob(os.path.join(root, "*", "compiled", "*.json")):
    s = open(f).read()  # library paths: @CB@/..., or relative to the repository root where the pack was made
    open(f, "w").write(s.replace("@CB@", root).replace('".carry/corpus_bench/', '"' + root + "/"))
    n += 1
print(f"corpus-bench: unpacked {n} compiled configurations into {root}")
PY
}

# pack_of NAME: the unpacked pack's folder of NAME when its annotated copy is what this kopt derives now.
pack_of() {
  local p=runs/cb_pack/corpus_bench/$1 w=$2
  [ -f "$p/annotated.cu" ] || return 1
  # The first line names the path it was derived from; the rest is the space.
  if ! cmp -s <(grep -v '^// kopt: the search space' "$p/annotated.cu") <(grep -v '^// kopt: the search space' "$w/annotated.cu"); then
    echo "corpus-bench: $1: this kopt derives another space than the pack's (the pack is stale): compiling here" >&2
    return 1
  fi
  echo "$p"
}

cmd_plan() {
  local names=("$@") n k d p total=0 c
  [ ${#names[@]} -gt 0 ] || read -r -a names <<<"$CB_DEFAULT"
  check_names "${names[@]}" || return 2
  mkdir -p runs
  unpack
  for n in "${names[@]}"; do
    k=$(corpus_kernel "$n"); d=runs/cb_plan/$n
    derive "$d" "$n" || return 1
    if [ "${k##*.}" = cu ]; then
      c=$(wc -l <"$d/configs.txt")
      p=$(pack_of "$n" "$d") && p="carried: $(grep -l '"status": "ok"' "$p"/compiled/*.json | wc -l) compiled" || p="NOT carried: compiled on the device"
    else
      c=$(python3 -c "import json,math,sys;print(math.prod(len(p['values']) for p in json.load(open(sys.argv[1]))['params']))" "$d/derived.json")
      p="Triton: JIT-compiled by the sweep"
    fi
    # The contract at the benchmark's dims and flags, as optimize and bench will check it: the kernel compiled with
    # its flags, the reference run once on the CPU at these dims.
    # shellcheck disable=SC2086
    "$KOPT" check "$k" --ref "examples/corpus/$n/ref.py" $(bench_dims "$n") $(corpus_dims "$n" flags) >"$d/check.log" 2>&1
    echo "plan $n: kopt check at the benchmark's dims: exit $? ($(tail -1 "$d/check.log"))"
    total=$((total + c))
    echo "plan $n: $k $(bench_dims "$n") $(corpus_dims "$n" flags) | $c configurations ($p) | $(grep -c '@kopt param' "$d/annotated.${k##*.}") params"
  done
  echo "plan: ${#names[@]} kernels, $total configurations"
}

# kernel_json FILE KEY=VALUE...: kernel.json, updated (numbers stay numbers).
kernel_json() {
  python3 - "$@" <<'PY'
import json, os, sys
f = sys.argv[1]
d = json.load(open(f)) if os.path.exists(f) else {}
for kv in sys.argv[2:]:
    k, _, v = kv.partition("=")
    try:
        v = json.loads(v)
    except ValueError:
        pass
    cur = d
    *path, last = k.split(".")
    for p in path:
        cur = cur.setdefault(p, {})
    cur[last] = v
json.dump(d, open(f, "w"), indent=1, sort_keys=True)
PY
}

# sweep_cases NAME KERNEL WORK OUTDIR PACKDIR FLAGS: for each case of the optimize run other than the primary one
# (state.json gate_records.cases: realised dims, weight), kopt bench there (its golden data) and the sweep of the same
# space there, as measurements_CASE.csv; kernel.json's `cases` lists every case with its weight and dims.
sweep_cases() {
  local n=$1 k=$2 w=$3 o=$4 p=$5 flags=$6 name weight cdims g t rc
  [ -f "$o/state.json" ] || return 0
  python3 - "$o/state.json" "$o/kernel.json" >"$w/cases.txt" <<'PY'
import json, sys
cases = (json.load(open(sys.argv[1])).get("gate_records") or {}).get("cases") or []
kj = json.load(open(sys.argv[2]))
kj["cases"] = [{"name": c["name"], "weight": c.get("weight", 1), "primary": bool(c.get("primary")),
                "dims": c.get("realised") or c.get("requested") or {}} for c in cases]
json.dump(kj, open(sys.argv[2], "w"), indent=1, sort_keys=True)
for c in kj["cases"]:
    if not c["primary"]:
        print(c["name"], c["weight"], " ".join("--%s=%s" % kv for kv in sorted(c["dims"].items())))
PY
  while read -r name weight cdims; do
    [ -n "$name" ] || continue
    t=$(now)
    # shellcheck disable=SC2086  # dims and flags are lists of words
    timeout -k 10 120 "$KOPT" bench "$k" --ref "examples/corpus/$n/ref.py" $cdims $flags --no-reference-timing --measure-budget-s 0.5 \
      --out-dir "$w/bench_$name" </dev/null >"$o/bench_$name.log" 2>&1
    g=$(find "$w/bench_$name/kopt_runs" -maxdepth 2 -type d -name golden 2>/dev/null | head -1)
    [ -n "$g" ] || { echo "=== case $name of $n: no golden data ($cdims)"; continue; }
    if [ "${k##*.}" = cu ]; then
      timeout -k 10 "${CB_SWEEP_LIMIT_S:-150}" python3 scripts/perf/measure_space.py --kopt "$KOPT" --golden "$g" \
        --configs "$p/configs.txt" --compiled "$p/compiled" --out "$w/sweep_$name" --flops 0 --chunk 48 --rounds 7 >>"$o/sweep_$name.log" 2>&1
    else
      timeout -k 10 "${CB_SWEEP_LIMIT_S:-150}" python3 scripts/device/plain_sweep_triton.py --kernel "examples/corpus/$n/kernel_cb_annotated.py" \
        --derivation "$w/derived.json" --golden "$g" --out "$w/sweep_$name" --chunk "${CB_TRITON_CHUNK:-12}" >>"$o/sweep_$name.log" 2>&1
    fi
    rc=$?
    cp "$w/sweep_$name/measurements.csv" "$o/measurements_$name.csv" 2>/dev/null
    kernel_json "$o/kernel.json" "steps.sweep_$name.rc=$rc" "steps.sweep_$name.s=$(secs "$t" "$(now)")"
    echo "=== case $name of $n ($cdims, weight $weight): bench and sweep rc=$rc $(secs "$t" "$(now)") s"
    pack_out
  done <"$w/cases.txt"
}

pack_out() { tar czf "$OUT/corpus_bench.tgz.part" -C "$OUT" corpus_bench && mv "$OUT/corpus_bench.tgz.part" "$OUT/corpus_bench.tgz"; }

cmd_run() {
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || read -r -a names <<<"$CB_DEFAULT"
  check_names "${names[@]}" || return 2
  [ -x "$KOPT" ] || { echo "corpus-bench: no kopt (.carry/build/kopt or KOPT_BIN)" >&2; return 1; }
  OUT="${OUT:-$PWD/check_out}"
  local T0 deadline=${CB_DEADLINE_S:-470} min_s=${CB_MIN_KERNEL_S:-100} tb=${CB_TIME_BUDGET_S:-40}
  local opt_max n k d w o p left cap t rc run g dims flags
  T0=$(now)
  mkdir -p "$OUT/corpus_bench" runs/cb
  export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
  unpack
  for n in "${names[@]}"; do
    k=$(corpus_kernel "$n"); w=runs/cb/$n; o=$OUT/corpus_bench/$n; p=""   # the CUDA sweep's compiled configurations: none for a Triton kernel (set -u)
    dims=$(bench_dims "$n"); flags=$(corpus_dims "$n" flags)
    rm -rf "$w" "$o"; mkdir -p "$w" "$o"
    left=$(python3 -c "import time;print(int($deadline-(time.time()-$T0)))")
    kernel_json "$o/kernel.json" "name=$n" "kernel=$k" "dims=\"$dims\"" "flags=\"$flags\"" \
      "typical=\"$(corpus_dims "$n" typical)\"" "time_budget_s=$([ "$tb" = none ] && echo null || echo "$tb")" "started_s=$(secs "$T0" "$(now)")"
    if [ "$left" -lt "$min_s" ]; then
      echo "=== corpus-bench $n: skipped, $left s left before the deadline ($deadline s)"
      kernel_json "$o/kernel.json" "skipped=\"deadline: $left s left\""
      pack_out; continue
    fi
    echo "=== corpus-bench $n ($k $dims; $left s left)"
    derive "$w" "$n" >"$o/derive.log" 2>&1 || { cat "$o/derive.log"; kernel_json "$o/kernel.json" "skipped=\"annotate failed\""; pack_out; continue; }
    cp "$w/annotate.txt" "$w/annotated.${k##*.}" "$w/derived.json" "$o/" 2>/dev/null
    [ -f "$w/configs.txt" ] && cp "$w/configs.txt" "$o/"
    # (i) kopt's default optimize, capped.
    steps=" ${CB_STEPS:-optimize bench sweep} "
    if [[ "$steps" == *" optimize "* ]]; then
      # A Triton kernel's gates start a cold harness (torch, Triton, the project's package: liger_softmax's golden data
      # took 24 s of a 46 s cold bench, s23) and JIT-compile each check's kernel: 160 s unless CB_OPT_LIMIT_S says.
      # kopt's default optimize (CB_TIME_BUDGET_S=none) searches to its own stop: 240 s a Triton kernel, 150 s a CUDA
      # one (H100, session 40: fla_softmax was cut at 150 s in its held-out shapes, flashinfer_online_softmax took 93 s).
      case "$tb:${k##*.}" in none:py) opt_max=240 ;; none:*) opt_max=150 ;; *:py) opt_max=160 ;; *) opt_max=100 ;; esac
      opt_max=${CB_OPT_LIMIT_S:-$opt_max}
      cap=$opt_max
      [ $((left - 40)) -lt "$cap" ] && cap=$((left - 40))
      kernel_json "$o/kernel.json" "opt_limit_s=$cap"
      t=$(now)
      # shellcheck disable=SC2086  # dims and flags are lists of words
      # Each line stamped with the seconds since the command's start (where the gates' time goes).
      timeout -k 10 $((cap + 30)) timeout -s INT "$cap" "$KOPT" optimize "$k" --ref "examples/corpus/$n/ref.py" $dims $flags \
        $([ "$tb" = none ] || echo --time-budget "$tb") --out-dir "$w/opt" </dev/null 2>&1 | stamp >"$o/optimize.log"
      rc=${PIPESTATUS[0]}
      kernel_json "$o/kernel.json" "steps.optimize.rc=$rc" "steps.optimize.s=$(secs "$t" "$(now)")"
      echo "=== optimize $n rc=$rc $(secs "$t" "$(now)") s"; tail -6 "$o/optimize.log"
      run=$(ls -d "$w"/opt/kopt_runs/run_* 2>/dev/null | head -1)
      # golden_stream.log: where the gates' golden data spent its seconds (the harness's per-request phases)
      [ -n "$run" ] && cp "$run"/state.json "$run"/summary.json "$run"/options.json "$run"/summary.md "$run"/golden_stream.log "$o/" 2>/dev/null
      pack_out
    else
      echo "=== optimize $n: not run (CB_STEPS=$CB_STEPS)"
    fi
    # (iii) the project's choice by kopt bench, which also makes the sweep's golden data (3 seeds, as optimize's).
    if [[ "$steps" == *" bench "* ]]; then
      t=$(now)
      # shellcheck disable=SC2086
      timeout -k 10 120 "$KOPT" bench "$k" --ref "examples/corpus/$n/ref.py" $dims $flags --no-reference-timing --measure-budget-s 0.5 \
        --json "$o/bench.json" --out-dir "$w/bench" </dev/null >"$o/bench.log" 2>&1
      rc=$?
      kernel_json "$o/kernel.json" "steps.bench.rc=$rc" "steps.bench.s=$(secs "$t" "$(now)")"
      echo "=== bench $n rc=$rc $(secs "$t" "$(now)") s"; grep -E "kernel +median|error" "$o/bench.log" | head -3
    else
      echo "=== bench $n: not run (CB_STEPS=$CB_STEPS): the sweep takes the optimize's golden data"
    fi
    [[ "$steps" == *" sweep "* ]] || { pack_out; continue; }
    # The sweep's golden data: the bench's, else the optimize's (the same dims and seeds).
    g=$(find "$w/bench/kopt_runs" "$w/opt/kopt_runs" -maxdepth 2 -type d -name golden 2>/dev/null | head -1)
    if [ -z "$g" ]; then echo "corpus-bench $n: no golden data, no sweep"; tail -5 "$o/bench.log" 2>/dev/null; pack_out; continue; fi
    # (ii) the sweep of the derived space.
    t=$(now)
    if [ "${k##*.}" = cu ]; then
      if p=$(pack_of "$n" "$w"); then
        kernel_json "$o/kernel.json" "sweep_compiled=\"carried\""
      else
        p=$w; compile_space "$w" "$n" "$(nproc)" 2>>"$o/sweep.log"
        kernel_json "$o/kernel.json" "sweep_compiled=\"here\"" "steps.sweep_compile.s=$(secs "$t" "$(now)")"
      fi
      timeout -k 10 "${CB_SWEEP_LIMIT_S:-150}" python3 scripts/perf/measure_space.py --kopt "$KOPT" --golden "$g" \
        --configs "$p/configs.txt" --compiled "$p/compiled" --out "$w/sweep" --flops 0 --chunk 48 --rounds 7 >>"$o/sweep.log" 2>&1
    else
      # A Triton kernel's annotated copy must sit beside the original (it imports the fetched package by its path).
      cp "$w/annotated.py" "examples/corpus/$n/kernel_cb_annotated.py"
      timeout -k 10 "${CB_SWEEP_LIMIT_S:-150}" python3 scripts/device/plain_sweep_triton.py --kernel "examples/corpus/$n/kernel_cb_annotated.py" \
        --derivation "$w/derived.json" --golden "$g" --out "$w/sweep" --chunk "${CB_TRITON_CHUNK:-12}" >>"$o/sweep.log" 2>&1
    fi
    rc=$?
    kernel_json "$o/kernel.json" "steps.sweep.rc=$rc" "steps.sweep.s=$(secs "$t" "$(now)")"
    echo "=== sweep $n rc=$rc $(secs "$t" "$(now)") s"; tail -2 "$o/sweep.log"
    cp "$w"/sweep/measurements.csv "$w"/sweep/measurements.partial.csv "$w"/sweep/failures.txt "$w"/sweep/costs.csv "$o/" 2>/dev/null
    pack_out
    # (iv) the sweep at the optimize's other cases: kopt's default objective is the weighted geometric mean over the
    # workload matrix's cases (docs/GATES.md), so the sweep's best by that objective is what its champion is held to.
    [ "${CB_CASES:-on}" = off ] || sweep_cases "$n" "$k" "$w" "$o" "$p" "$flags"
    python3 scripts/perf/corpus_table.py "$OUT/corpus_bench" --only "$n" --lines 2>&1 | tail -3
    pack_out
  done
  python3 scripts/perf/corpus_table.py "$OUT/corpus_bench" --md "$OUT/corpus_table.md" --json "$OUT/corpus_table.json" \
    --plot "$OUT/corpus_bench.png" 2>&1 | tail -40
  kernel_json "$OUT/corpus_bench/run.json" "whole_s=$(secs "$T0" "$(now)")" "deadline_s=$deadline" \
    "commit=\"$(head -1 .carry/build/COMMIT 2>/dev/null)\"" "gpu=\"$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)\"" \
    "date=\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  pack_out && rm -rf "$OUT/corpus_bench"
  echo "corpus-bench: $(secs "$T0" "$(now)") s in all"
}

main() {
  local cmd=${1:-}; shift || true
  case "$cmd" in
    prepare) cmd_prepare "$@" ;;
    plan) cmd_plan "$@" ;;
    run) cmd_run "$@" ;;
    check-names) check_names "$@" ;;
    *) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; [ "$cmd" = -h ] || [ "$cmd" = --help ] ;;
  esac
}
main "$@"
