#!/usr/bin/env bash
# The long differential run of stock <sys/sdt.h> markers: many more csmith
# programs than ctest's bounded set, every build of gcc and clang at -O0 to -O3.
# Its result goes into bench/reports/markers.md ("Differential test").
#   tests/differential/run-long.sh [FIRST-LAST] [BUILD_DIR]   (default 1001-1200 build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seeds=${1:-1001-1200}
build=${2:-$here/../../build}
start=$(date +%s)
status=0
python3 "$here/run_differential.py" --sonde "$build/sonde" --seeds "$seeds" \
  --compilers gcc,clang --opts O0,O1,O2,O3 --jobs "$(nproc)" || status=$?
echo "seeds $seeds: $(( $(date +%s) - start )) s, $(gcc --version | head -1), $(clang --version | head -1)"
exit $status
