#!/usr/bin/env bash
# Installs what is missing, then configures and builds Sonde in ./build with
# clang-19 and Ninja (clang also builds the libFuzzer target).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build=${SONDE_BUILD_DIR:-$top/build}
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-19 CXX=clang++-19 cmake -G Ninja -S "$top" -B "$build" \
    -DCMAKE_BUILD_TYPE=${SONDE_BUILD_TYPE:-RelWithDebInfo} >/dev/null
fi
ninja -C "$build" -j "${SONDE_JOBS:-2}"
