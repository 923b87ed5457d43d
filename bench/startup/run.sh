#!/usr/bin/env bash
# Start-up: wall time from launching a script to its first output, for scripts
# of 1, 20 and 200 probes (one begin probe that prints and exits, the rest timer
# probes that never fire), Sonde next to bpftrace on equivalent scripts.
# Median of 5 runs. Writes bench/reports/startup.md. Goal: <= 100 ms at 20 probes.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
report=$reports/startup.md

# Milliseconds from start until the command prints "ready" (bpftrace prints an
# "Attaching N probes" line before it).
first_output_ms() {
  local start end
  start=$(date +%s%N)
  "$@" 2>/dev/null | grep -m1 -q ready
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

sonde_script() {
  local n=$1
  echo 'probe begin { printf("ready\n"); exit() }'
  for ((i = 1; i < n; i++)); do echo "probe timer.s($((1000 + i))) { next }"; done
}

bpftrace_script() {
  local n=$1
  echo 'BEGIN { printf("ready\n"); exit(); }'
  for ((i = 1; i < n; i++)); do echo "interval:s:$((1000 + i)) { }"; done
}

have_bpftrace=0
if command -v bpftrace > /dev/null && bpftrace -e 'BEGIN { exit(); }' > /dev/null 2>&1; then
  have_bpftrace=1
fi

{
  echo "# Start-up: launch to first output"
  echo
  echo "Machine: $(nproc) cores, $(date -u +%F). Median of 5 runs, wall milliseconds."
  echo "Each script has one begin probe that prints and exits plus N-1 timer probes."
  echo
  echo "| probes | sonde ms | bpftrace ms | sonde / bpftrace |"
  echo "|---:|---:|---:|---:|"
} > "$report"

for n in 1 20 200; do
  sonde_script "$n" > "$tmp/s$n.probe"
  bpftrace_script "$n" > "$tmp/b$n.bt"
  "$sonde" "$tmp/s$n.probe" > /dev/null # fail loudly before timing
  s=$(for r in 1 2 3 4 5; do first_output_ms "$sonde" "$tmp/s$n.probe"; done | median)
  if [ "$have_bpftrace" = 1 ]; then
    b=$(for r in 1 2 3 4 5; do first_output_ms bpftrace "$tmp/b$n.bt"; done | median)
    ratio=$(awk -v s="$s" -v b="$b" 'BEGIN {printf "%.2f", s / b}')
  else
    b="n/a" ratio="n/a"
  fi
  echo "| $n | $s | $b | $ratio |" >> "$report"
done
cat "$report"
