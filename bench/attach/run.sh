#!/usr/bin/env bash
# Attach (issue 8): `sonde -x PID` on a running process whose main thread spins
# on the clock while three threads fire a marker. Per cycle: the pause sonde
# reports (-v: how long it held the stopped thread), the longest gap the main
# thread itself saw, and the wall time from launching sonde to its first event;
# bpftrace -p on the same marker (a uprobe, no stop) for the last column.
# 20 cycles on one process. Writes bench/reports/attach.md.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
report=$reports/attach.md
cycles=${CYCLES:-20}

build_target "$tmp/target" "$here/attach_target.c" -lpthread
"$tmp/target" > "$tmp/target.out" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
until grep -q ready "$tmp/target.out"; do sleep 0.01; done

# The longest gap the main thread sees since the last call (SIGUSR1).
gap_ms() {
  local lines
  lines=$(wc -l < "$tmp/target.out")
  kill -USR1 "$pid"
  until [ "$(wc -l < "$tmp/target.out")" -gt "$lines" ]; do sleep 0.01; done
  tail -1 "$tmp/target.out" | awk '{printf "%.3f", $1 / 1000}'
}
gap_ms > /dev/null
sleep 2
quiet_gap=$(gap_ms)

script='global n probe process.mark("tick") { if (n++ == 0) { println("first"); exit() } }'
: > "$tmp/pauses" ; : > "$tmp/first"
for ((c = 0; c < cycles; c++)); do
  start=$EPOCHREALTIME
  "$sonde" -v -x "$pid" -e "$script" > "$tmp/out" 2> "$tmp/err"
  grep -q first "$tmp/out"
  end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" 'BEGIN {printf "%.0f\n", (e - s) * 1000}' >> "$tmp/first"
  sed -n 's/.*one thread stopped for \([0-9.]*\) ms.*/\1/p' "$tmp/err" >> "$tmp/pauses"
done
attached_gap=$(gap_ms)
kill -TERM "$pid"
wait "$pid" || true

bpf_ms="n/a"
if command -v bpftrace > /dev/null; then
  "$tmp/target" > "$tmp/target2.out" &
  pid2=$!
  until grep -q ready "$tmp/target2.out"; do sleep 0.01; done
  times=()
  for ((c = 0; c < 5; c++)); do
    start=$EPOCHREALTIME
    # bpftrace's status is ignored: grep -q ends the pipe at the first line.
    if { bpftrace -p "$pid2" -e "usdt:$tmp/target:bench:tick { printf(\"first\\n\"); exit(); }" \
        2> /dev/null || true; } | grep -q first; then
      end=$EPOCHREALTIME
      times+=("$(awk -v s="$start" -v e="$end" 'BEGIN {printf "%.0f", (e - s) * 1000}')")
    fi
  done
  kill -TERM "$pid2"; wait "$pid2" || true
  [ ${#times[@]} -gt 0 ] && bpf_ms=$(printf '%s\n' "${times[@]}" | median)
fi

# Starting the executables alone (loading libLLVM, relocating): on a VM
# whose page faults are slow this is most of the launch-to-first-event time.
start_ms() {
  local times=() c start end
  for ((c = 0; c < 5; c++)); do
    start=$EPOCHREALTIME
    "$@" > /dev/null 2>&1 || true
    end=$EPOCHREALTIME
    times+=("$(awk -v s="$start" -v e="$end" 'BEGIN {printf "%.0f", (e - s) * 1000}')")
  done
  printf '%s\n' "${times[@]}" | median
}
sonde_start=$(start_ms "$sonde" --version)
bpf_start="n/a"
command -v bpftrace > /dev/null && bpf_start=$(start_ms bpftrace --version)

max() { sort -n | tail -1; }
{
  echo "# Attach to a running process (sonde -x)"
  echo
  echo "Machine: $(nproc) cores, $(date -u +%F). $cycles attach/detach cycles on one process"
  echo "(main thread spinning on the clock, three threads firing a marker)."
  echo
  echo "| measure | median | max |"
  echo "|---|---:|---:|"
  echo "| thread held stopped (sonde -v), ms | $(median < "$tmp/pauses") | $(max < "$tmp/pauses") |"
  echo "| longest main-thread gap, 2 s without sonde, ms | | $quiet_gap |"
  echo "| longest main-thread gap over the $cycles cycles, ms | | $attached_gap |"
  echo "| launch to first event, sonde -x, ms | $(median < "$tmp/first") | $(max < "$tmp/first") |"
  echo "| launch to first event, bpftrace -p (USDT), ms | $bpf_ms | |"
  echo "| start of the executable alone (--version), sonde / bpftrace, ms | $sonde_start / $bpf_start | |"
  echo
  echo "Goal (issue 8): the target is stopped for milliseconds, not seconds."
} > "$report"
cat "$report"
