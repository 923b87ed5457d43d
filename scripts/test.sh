#!/usr/bin/env bash
# The README's test command: install what is missing, build, run the whole
# ctest suite.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/build.sh"
build=${SONDE_BUILD_DIR:-$top/build}
cd "$build"
ctest --output-on-failure -j "${SONDE_JOBS:-2}" "$@"
