#!/usr/bin/env bash
# Front-end speed: `sonde -p2` on generated scripts of 500, 5,000 and 20,000
# lines; median of 5 runs of wall and CPU time. Writes bench/reports/frontend.md.
# Goal (issue 2): under 0.3 s for 5,000 lines.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
report=$reports/frontend.md

{
  echo "# Front end: sonde -p2 on generated scripts"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%F)."
  echo "Median of 5 runs; CPU = user + sys. Goal: 5,000 lines under 0.3 s."
  echo
  echo "| lines | probes | wall s | CPU s |"
  echo "|---:|---:|---:|---:|"
} > "$report"

for lines in 500 5000 20000; do
  script=$tmp/gen_$lines.probe
  "$top/bench/frontend/gen_script.sh" "$lines" > "$script"
  actual=$(wc -l < "$script")
  probes=$(grep -c '^probe' "$script")
  "$sonde" -p2 "$script" > /dev/null # fail loudly before timing
  walls=() cpus=()
  for run in 1 2 3 4 5; do
    out=$( { /usr/bin/time -f '%e %U %S' "$sonde" -p2 "$script" > /dev/null; } 2>&1 | tail -1)
    read -r wall user sys <<< "$out"
    walls+=("$wall")
    cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')")
  done
  wall=$(printf '%s\n' "${walls[@]}" | median)
  cpu=$(printf '%s\n' "${cpus[@]}" | median)
  echo "| $actual | $probes | $wall | $cpu |" >> "$report"
done
cat "$report"
