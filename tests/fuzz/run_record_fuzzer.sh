#!/usr/bin/env bash
# run_record_fuzzer.sh FUZZER WORKDIR SECONDS: fuzz the decoding of records a
# traced process sends for SECONDS, starting from the kept seeds. Exit non-zero
# on any crash, hang (10 s per input), leak or sanitizer report.
set -euo pipefail
fuzzer=$1 work=$2 seconds=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/new" "$work/artifacts"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/new" "$here/records"
