#!/usr/bin/env bash
# Every system call probed, entry and return (stap's `syscall.*,
# syscall.*.return`; 720 syscalls:* events on this kernel), Sonde next to
# bpftrace: the whole run's wall time (compile, attach, the workload, detach)
# and the workload's close(5000) rate once attached. Sonde runs these probes
# from raw_syscalls:sys_enter/sys_exit by call number
# (probes/tracepoint/SyscallDispatch.h); bpftrace attaches each event (and
# needs BPFTRACE_MAX_PROBES raised past 512). Median of ALL_RUNS (3) runs of
# ALL_N (1,000,000) calls. Needs root. Writes the "all-syscalls" section of
# bench/reports/kernel.md.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${ALL_N:-1000000}
runs=${ALL_RUNS:-3}

cd "$tmp"
build_target b4_close "$here/b4_close.c"

sonde_script='global c
probe syscall.*, syscall.*.return { c[name] <<< 1 }'
bpftrace_script='tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_* { @[probe] = count(); }'

sonde_run() { "$sonde" -e "$sonde_script" -c "./b4_close $n $tmp/result" > /dev/null; }
bpftrace_run() {
  BPFTRACE_MAX_PROBES=2000 bpftrace -e "$bpftrace_script" -c "./b4_close $n $tmp/result" > /dev/null
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
read -r s_wall s_rate <<< "$(measure sonde_run)"
read -r b_wall b_rate <<< "$(measure bpftrace_run)"

section=$tmp/all.md
{
  echo "## Every system call probed"
  echo
  section_header
  echo "Workload: close(5000) (EBADF) $n times under a script on all $events syscalls:*"
  echo "events (Sonde: \`probe syscall.*, syscall.*.return { c[name] <<< 1 }\`; bpftrace:"
  echo "\`tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_* { @[probe] = count(); }\`"
  echo "with BPFTRACE_MAX_PROBES=2000). Wall s: the whole run, from launch to the tool's"
  echo "exit (compile, attach, the workload, detach); M calls/s: measured inside the"
  echo "workload once attached. Median of $runs runs."
  echo
  echo "| tool | wall s | M calls/s |"
  echo "|---|---:|---:|"
  echo "| no tracer | $base_wall | $base_rate |"
  echo "| Sonde (dispatched by call number from raw_syscalls) | $s_wall | $s_rate |"
  echo "| bpftrace (one perf event per syscall event) | $b_wall | $b_rate |"
  echo
  echo "Sonde's run takes $(awk -v s="$s_wall" -v b="$b_wall" 'BEGIN { if (s == "failed" || b == "failed") print "n/a"; else printf "%.1f%%", 100 * s / b }') of bpftrace's wall time;"
  echo "its workload runs at $(awk -v s="$s_rate" -v b="$b_rate" 'BEGIN { if (s == "failed" || b == "failed") print "n/a"; else printf "%.2fx", s / b }') bpftrace's rate."
  first_failure
} > "$section"
write_section all-syscalls "$section"
cat "$section"
