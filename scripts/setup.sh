#!/usr/bin/env bash
# Installs everything kopt needs on a fresh Debian machine, then builds kopt and its tests into build/.
# Usage: bash scripts/setup.sh        (idempotent; re-running only rebuilds what changed)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# A machine restored from a snapshot can have a regular file for /dev/null: whatever was written there is then read
# back by every child given it as stdin (seen on CI, 2026-12-05). Put the device back where we may.
if [ ! -c /dev/null ]; then
  echo "setup: warning: /dev/null is not a character device here; making it one" >&2
  # Made beside it and renamed over it: other processes write to /dev/null all the time, recreating a removed one.
  { $SUDO mknod -m 666 /dev/.null.kopt c 1 3 && $SUDO mv -f /dev/.null.kopt /dev/null; } ||
    echo "setup: warning: could not mend /dev/null; tests that read it may fail" >&2
fi

need_apt=()
# libcurl4-openssl-dev: the headers of libcurl, opened at run time for --generator llm; libjs-chart.js: Chart.js, compiled into kopt for summary.html; chromium: the test that opens that page;
# libsqlite3-dev: the results database (src/db/, linked to libsqlite3.so.0).
for pkg in g++ cmake ninja-build pkg-config libgtest-dev nlohmann-json3-dev libcli11-dev libfmt-dev libxxhash-dev libffi-dev libcurl4-openssl-dev libsqlite3-dev \
           python3 python3-pip libjs-chart.js chromium; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# The CUDA toolkit (nvcc and cuda.h) is not a Debian package of a usable version; it must be present.
NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ]; then
  echo "setup: nvcc not found. Install the CUDA 13 toolkit (nvcc, cuda.h) or put it on PATH, then re-run." >&2
  exit 4
fi
export PATH="$(dirname "$NVCC"):$PATH"

PY="${KOPT_PYTHON:-python3}"
echo "setup: installing Python packages with $($PY --version 2>&1)"
PIP_FLAGS=(-q --disable-pip-version-check)
# Debian's system python refuses global installs (PEP 668); pyenv or a venv python accepts them.
pip_install() {
  if ! $PY -m pip install "${PIP_FLAGS[@]}" "$@" 2>/tmp/kopt-pip.err; then
    if grep -q externally-managed /tmp/kopt-pip.err; then
      $PY -m pip install "${PIP_FLAGS[@]}" --break-system-packages "$@"
    else
      cat /tmp/kopt-pip.err >&2
      exit 1
    fi
  fi
}
pip_install -r python/requirements.txt
# Header-only wheels (the CUTLASS/CuTe headers): their Python dependencies are not needed.
pip_install --no-deps -r python/requirements-headers.txt
# The third-party kernels the corpus wraps (examples/corpus, issue 35): pinned wheels from PyPI, unpacked into
# examples/corpus/_fetched (never committed; 15 MB). Without them corpus_check skips what is missing.
$PY scripts/corpus/fetch.py || echo "setup: warning: the corpus's packages were not fetched (corpus_check skips them)" >&2

BUILD_TYPE="${KOPT_BUILD_TYPE:-RelWithDebInfo}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DPython3_EXECUTABLE="$(command -v $PY)"
cmake --build build -j"$(nproc)"
echo "setup: done. kopt is build/kopt; run the tests with: ctest --test-dir build --output-on-failure"
