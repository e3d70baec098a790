#!/usr/bin/env bash
# Copies build/kopt and build/kopt_tests (and the prebuilt ceilings probes), stripped of debug information (18 MiB instead of 470), into .carry/build
# for the device tool's carry (its limit is 64 MiB in all). Run after `cmake --build build`.
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p .carry/build
for b in kopt kopt_tests; do strip --strip-debug -o ".carry/build/$b" "build/$b"; done
# The prebuilt ceilings probes (docs/ROOFLINE.md "The prebuilt probe"): found beside the kopt that runs.
for p in build/kopt_ceilings_probe_*; do [ -f "$p" ] && cp "$p" .carry/build/; done
git rev-parse --short HEAD > .carry/build/COMMIT
git diff --quiet HEAD -- src || echo "(with uncommitted changes)" >> .carry/build/COMMIT
ls -la .carry/build; du -sh .carry/build
