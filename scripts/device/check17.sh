#!/usr/bin/env bash
# Device check 17 (2026-12-01, nvidia-h200): issue 15's plain kernels (plain_check.sh), all four in one call inside
# what was left of the session's device time: each optimize is capped at OPT_LIMIT_S (default 50) seconds and runs
# with --workload-matrix off --sanitize off (the shapes and safety gates of issue 18 cost about 25 s of gates per
# run; the search itself is the default), then the exhaustive sweep of the same derived space.
# Run there: bash scripts/device/check17.sh   (carry [".carry"])
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export OPT_LIMIT_S=${OPT_LIMIT_S:-50} PLAIN_OPT_FLAGS="${PLAIN_OPT_FLAGS:---workload-matrix off --sanitize off}"
plain_in "${CHECK17_LIMIT_S:-360}" sgemm_tiled reduction_define elementwise_templated triton_literal
ls -la "$OUT"
