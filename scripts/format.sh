#!/usr/bin/env bash
# Formats the lines of C++ this branch changed, and only those, with the repository's .clang-format (git clang-format
# against BASE: by default the last commit of origin/main this branch has, else HEAD: the staged lines; BASE can be any
# commit, e.g. the last one that landed).
# The code base was not reformatted at once: its lines are formatted as they are touched. Look at the result before
# committing: a long nested braced list (a JSON literal) comes out one element a line; keep the old shape there.
# Usage: bash scripts/format.sh [BASE]        (needs clang-format: apt-get install clang-format)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git-clang-format >/dev/null || { echo "format: git-clang-format not found (apt-get install clang-format)" >&2; exit 4; }
base="${1:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-parse HEAD)}"
git clang-format --binary "$(command -v clang-format)" --extensions cpp,h "$base" -- src
