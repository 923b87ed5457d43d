#!/usr/bin/env bash
# run_fuzzer.sh FUZZER WORKDIR SECONDS: fuzz passes 1-2 for SECONDS, starting
# from the kept corpus and every accepted test script. Exit non-zero on any
# crash, hang (10 s per input), leak or sanitizer report.
set -euo pipefail
fuzzer=$1 work=$2 seconds=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/new" "$work/artifacts"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -dict="$here/sonde.dict" -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
  "$work/new" "$here/corpus" "$here/../parse/accept"
