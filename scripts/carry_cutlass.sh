#!/usr/bin/env bash
# Copies the CUTLASS headers (include/cutlass and include/cute only) into .carry/cutlass/include and packs
# them into .carry/cutlass.tgz, so they can travel to a machine where nothing can be installed (the device
# tool's carry: [".carry/cutlass"] ~25 MiB, or [".carry/cutlass.tgz"] ~2.3 MiB, unpacked there with
# `tar xzf .carry/cutlass.tgz -C .carry`); there, `CUTLASS_PATH=$PWD/.carry/cutlass kopt ...` (or
# --cutlass-include .carry/cutlass/include) uses them.
# Source: $CUTLASS_PATH (the folder holding include/cutlass/cutlass.h, or an include folder itself), else the
# nvidia-cutlass wheel of python3 (scripts/setup.sh installs it). .carry/ is git-ignored: never commit it.
# Usage: bash scripts/carry_cutlass.sh        (prints the source, the version and the size)
set -euo pipefail
cd "$(dirname "$0")/.."

src=""
if [ -n "${CUTLASS_PATH:-}" ]; then
  if [ -f "$CUTLASS_PATH/include/cutlass/cutlass.h" ]; then src="$CUTLASS_PATH/include"
  elif [ -f "$CUTLASS_PATH/cutlass/cutlass.h" ]; then src="$CUTLASS_PATH"
  else echo "carry_cutlass: CUTLASS_PATH=$CUTLASS_PATH holds no include/cutlass/cutlass.h" >&2; exit 4; fi
else
  PY="${KOPT_PYTHON:-python3}"
  src="$($PY - <<'PYEOF' 2>/dev/null || true
import importlib.util, os
spec = importlib.util.find_spec("cutlass_library")
if spec and spec.submodule_search_locations:
    inc = os.path.join(list(spec.submodule_search_locations)[0], "source", "include")
    if os.path.isfile(os.path.join(inc, "cutlass", "cutlass.h")):
        print(inc)
PYEOF
)"
  if [ -z "$src" ]; then
    echo "carry_cutlass: no CUTLASS headers: set CUTLASS_PATH or pip install --no-deps nvidia-cutlass==4.2.0.0" >&2
    exit 4
  fi
fi
[ -d "$src/cute" ] || { echo "carry_cutlass: $src has no cute/ (CUTLASS 3.x or later is needed)" >&2; exit 4; }

dest=.carry/cutlass/include
rm -rf "$dest"
mkdir -p "$dest"
cp -R "$src/cutlass" "$src/cute" "$dest/"
# Headers only: anything else a tree may hold (build files, docs) stays behind.
find "$dest" -type f ! \( -name '*.h' -o -name '*.hpp' -o -name '*.inl' -o -name '*.cuh' \) -delete

version="$(sed -n 's/^#define CUTLASS_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$dest/cutlass/version.h" | paste -sd. -)"
bytes="$(du -sb "$dest" | cut -f1)"
files="$(find "$dest" -type f | wc -l)"
tar czf .carry/cutlass.tgz -C .carry cutlass
tgz_bytes="$(stat -c %s .carry/cutlass.tgz)"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
printf 'carry_cutlass: copied CUTLASS %s headers from %s\n' "${version:-?}" "$src"
printf 'carry_cutlass: %s: %d files, %s MiB; packed: .carry/cutlass.tgz, %s MiB\n' "$dest" "$files" "$(mib "$bytes")" "$(mib "$tgz_bytes")"
limit=$((60 * 1024 * 1024))
if [ "$bytes" -gt "$limit" ]; then
  echo "carry_cutlass: more than 60 MiB unpacked: carry .carry/cutlass.tgz instead" >&2
fi
echo "carry_cutlass: carry [\".carry/cutlass.tgz\"], then there: tar xzf .carry/cutlass.tgz -C .carry && export CUTLASS_PATH=\$PWD/.carry/cutlass"
echo "carry_cutlass:   (or carry [\".carry/cutlass\"] as it is, then: export CUTLASS_PATH=\$PWD/.carry/cutlass)"
