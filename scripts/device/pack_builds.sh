#!/usr/bin/env bash
# Packs kopt builds of other commits for the device suite `decisions` (check.sh): .carry/builds.txz holding, for each
# NAME:TREE (a checkout of the commit with its kopt built in TREE/build), NAME/bin/kopt (stripped), that commit's
# python/, data/ and the three examples the suite runs, NAME/COMMIT; ORDER lists the names in the order given (the
# suite compares the 1st with the 2nd, the 3rd with the 4th, ...). Run here, from the repository root:
#   bash scripts/device/pack_builds.sh p0:/work/wt-p0 p1:/work/wt-p1
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: pack_builds.sh NAME:TREE NAME:TREE [...] (pairs compared in order)" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
order=()
for spec in "$@"; do
  name=${spec%%:*} tree=${spec#*:}
  [ -x "$tree/build/kopt" ] || { echo "pack_builds: no $tree/build/kopt (build that checkout first)" >&2; exit 1; }
  mkdir -p "$stage/$name/bin"
  strip -o "$stage/$name/bin/kopt" "$tree/build/kopt"
  git -C "$tree" archive HEAD python data examples/reduction examples/cutlass_gemm examples/triton_softmax | tar x -C "$stage/$name"
  git -C "$tree" rev-parse --short HEAD >"$stage/$name/COMMIT"
  order+=("$name")
done
echo "${order[*]}" >"$stage/ORDER"
mkdir -p .carry
tar cJf .carry/builds.txz -C "$stage" .
ls -la .carry/builds.txz
