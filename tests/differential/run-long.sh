#!/usr/bin/env bash
# The long differential run of stock <sys/sdt.h> markers: many more csmith
# programs than ctest's bounded set, every build of gcc and clang-19 (and the
# default clang, if another one is installed) at -O0 to -O3. Its result goes into
# bench/reports/markers.md ("Differential test").
#   tests/differential/run-long.sh [FIRST-LAST] [BUILD_DIR]   (default 1001-1200 build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seeds=${1:-1001-1200}
build=${2:-$here/../../build}
# A copy of sonde and its agent: a rebuild during the run must not pull them away.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cp "$build/sonde" "$build/libsonde-agent.so" "$bin/"
compilers=gcc,clang-19
if command -v clang >/dev/null && ! clang --version | grep -q 'version 19\.'; then
  compilers=$compilers,clang
fi
start=$(date +%s)
status=0
python3 "$here/run_differential.py" --sonde "$bin/sonde" --seeds "$seeds" \
  --compilers "$compilers" --opts O0,O1,O2,O3 --jobs "$(nproc)" || status=$?
echo "seeds $seeds: $(( $(date +%s) - start )) s; $compilers:" \
  "$(for c in ${compilers//,/ }; do $c --version | head -1; done | paste -sd ';')"
exit $status
