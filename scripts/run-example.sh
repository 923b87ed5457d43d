#!/usr/bin/env bash
# The README's example command: install what is missing, build, and run a
# bundled example script (default: examples/hello.probe) with sonde.
#   scripts/run-example.sh [EXAMPLE.probe] [SONDE OPTIONS...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/build.sh" >/dev/null
build=${SONDE_BUILD_DIR:-$top/build}
example=${1:-$top/examples/hello.probe}
shift || true
exec "$build/sonde" "$example" "$@"
