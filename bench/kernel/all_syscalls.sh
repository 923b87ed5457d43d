#!/usr/bin/env bash
# Every system call probed, entry and return (stap's `syscall.*,
# syscall.*.return`; 720 syscalls:* events on this kernel), Sonde next to
# bpftrace: the whole run's wall time (compile, attach, the workload, detach)
# and the workload's close(5000) rate once attached. Sonde runs these probes
# from raw_syscalls:sys_enter/sys_exit by call number
# (probes/tracepoint/SyscallDispatch.h); bpftrace attaches each event (and
# needs BPFTRACE_MAX_PROBES and BPFTRACE_MAX_BPF_PROGS raised past 512).
# Median of ALL_RUNS (3) runs of ALL_N (1,000,000) calls. Needs root. Writes
# the "all-syscalls" section of bench/reports/kernel.md.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${ALL_N:-1000000}
runs=${ALL_RUNS:-3}

cd "$tmp"
build_target b4_close "$here/b4_close.c"

# Counting per pid (integer keys), then per call (string keys).
sonde_pid='global c
probe syscall.*, syscall.*.return { c[pid()] <<< 1 }'
bpftrace_pid='tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_* { @[pid] = count(); }'
sonde_name='global c
probe syscall.*, syscall.*.return { c[name] <<< 1 }'
bpftrace_name='tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_* { @[probe] = count(); }'

sonde_run() { "$sonde" -e "$1" -c "./b4_close $n $tmp/result" > /dev/null; }
bpftrace_run() {
  BPFTRACE_MAX_PROBES=2000 BPFTRACE_MAX_BPF_PROGS=2000 bpftrace -e "$1" -c "./b4_close $n $tmp/result" > /dev/null
}

# measure CMD: "WALL RATE" medians of $runs runs (wall seconds of the whole
# run, M close calls/s inside the workload), or "failed failed".
measure() {
  local walls=() rates=() wall rate
  for ((r = 0; r < runs; r++)); do
    rm -f result
    wall=$(wall_cpu_seconds "$@" 2>> first.err) || { echo "failed failed"; return; }
    rate=$(sed -n 's/.*calls_per_second=//p' result 2> /dev/null)
    [ -n "$rate" ] || { echo "failed failed"; return; }
    walls+=("${wall% *}")
    rates+=("$rate")
  done
  echo "$(printf '%s\n' "${walls[@]}" | median) $(printf '%s\n' "${rates[@]}" | median |
    awk '{ printf "%.3f", $1 / 1e6 }')"
}

events=$(ls -d /sys/kernel/tracing/events/syscalls/sys_*_* 2> /dev/null | wc -l)
read -r base_wall base_rate <<< "$(measure ./b4_close "$n" "$tmp/result")"
read -r sp_wall sp_rate <<< "$(measure sonde_run "$sonde_pid")"
read -r bp_wall bp_rate <<< "$(measure bpftrace_run "$bpftrace_pid")"
read -r sn_wall sn_rate <<< "$(measure sonde_run "$sonde_name")"
read -r bn_wall bn_rate <<< "$(measure bpftrace_run "$bpftrace_name")"

# "X% of the wall time, Y x the rate" of Sonde's run against bpftrace's.
versus() {
  awk -v sw="$1" -v sr="$2" -v bw="$3" -v br="$4" 'BEGIN {
    if (sw == "failed" || bw == "failed") print "n/a";
    else printf "%.1f%% of the wall time, %.2fx the rate", 100 * sw / bw, sr / br }'
}

section=$tmp/all.md
{
  echo "## Every system call probed"
  echo
  section_header
  echo "Workload: close(5000) (EBADF) $n times under scripts on all $events syscalls:*"
  echo "events: Sonde's \`probe syscall.*, syscall.*.return\` and bpftrace's"
  echo "\`tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_*\` (with"
  echo "BPFTRACE_MAX_PROBES and BPFTRACE_MAX_BPF_PROGS at 2000), counting per pid, then per"
  echo "call. Wall s: the whole run, from launch to the tool's exit (compile, attach, the"
  echo "workload, detach); M calls/s: measured inside the workload once attached. Median"
  echo "of $runs runs."
  echo
  echo "| tool | handler | wall s | M calls/s | Sonde vs bpftrace |"
  echo "|---|---|---:|---:|---|"
  echo "| no tracer | | $base_wall | $base_rate | |"
  echo "| bpftrace (one perf event per syscall event) | \`@[pid] = count()\` | $bp_wall | $bp_rate | |"
  echo "| Sonde (dispatched by call number) | \`c[pid()] <<< 1\` | $sp_wall | $sp_rate | $(versus "$sp_wall" "$sp_rate" "$bp_wall" "$bp_rate") |"
  echo "| bpftrace | \`@[probe] = count()\` | $bn_wall | $bn_rate | |"
  echo "| Sonde | \`c[name] <<< 1\` | $sn_wall | $sn_rate | $(versus "$sn_wall" "$sn_rate" "$bn_wall" "$bn_rate") |"
  first_failure
} > "$section"
write_section all-syscalls "$section"
cat "$section"
