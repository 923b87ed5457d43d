#!/usr/bin/env bash
# B4: the cost of syscall tracepoints (benchmarks.md B4, seed
# "syscall-tracepoint-overhead"): close(5000) in a loop, M calls/s, with
# raw_syscalls:sys_enter + sys_exit probed by Sonde and by bpftrace, empty and
# counting per pid; median of B4_RUNS (5) runs of B4_N (5,000,000) calls. The
# rate is measured inside the workload, after the tracer attached. Needs root.
# Writes the B4 section of bench/reports/kernel.md.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${B4_N:-5000000}
runs=${B4_RUNS:-5}

cd "$tmp"
build_target b4_close "$here/b4_close.c"

# median_rate CMD...: the median M calls/s of $runs runs, or "failed".
median_rate() {
  median_result calls_per_second "$@" | awk '$1 == "failed" { print; next } { printf "%.3f\n", $1 / 1e6 }'
}

sonde_run() { "$sonde" -e "$1" -c "./b4_close $n $tmp/result" > /dev/null; }
bpftrace_run() { bpftrace -e "$1" -c "./b4_close $n $tmp/result" > /dev/null; }

sonde_empty='probe kernel.trace("raw_syscalls:sys_enter") { } probe kernel.trace("raw_syscalls:sys_exit") { }'
sonde_count='global c
probe kernel.trace("raw_syscalls:sys_enter") { c[pid()]++ }
probe kernel.trace("raw_syscalls:sys_exit") { c[pid()]++ }'
sonde_stats='global c
probe kernel.trace("raw_syscalls:sys_enter") { c[pid()] <<< 1 }
probe kernel.trace("raw_syscalls:sys_exit") { c[pid()] <<< 1 }
probe end { foreach (p in c) n += @count(c[p]) }'
bpftrace_empty='tracepoint:raw_syscalls:sys_enter { } tracepoint:raw_syscalls:sys_exit { }'
bpftrace_count='tracepoint:raw_syscalls:sys_enter { @[pid] = count(); } tracepoint:raw_syscalls:sys_exit { @[pid] = count(); }'

base=$(median_rate ./b4_close "$n" "$tmp/result")
s_empty=$(median_rate sonde_run "$sonde_empty")
b_empty=$(median_rate bpftrace_run "$bpftrace_empty")
s_count=$(median_rate sonde_run "$sonde_count")
s_stats=$(median_rate sonde_run "$sonde_stats")
b_count=$(median_rate bpftrace_run "$bpftrace_count")

# ns added to each close(5000) call (enter + exit) over no probe.
overhead() {
  awk -v r="$1" -v b="$base" 'BEGIN { if (r == "failed") print "n/a"; else printf "%.0f", 1000 / r - 1000 / b }'
}
# Sonde's rate against bpftrace's: the verdict for "no slower on every row".
versus() {
  awk -v s="$1" -v b="$2" 'BEGIN { if (s == "failed" || b == "failed") print "n/a";
    else printf "%.2fx (%s)", s / b, ((s >= b * 0.97) ? "PASS" : "FAIL") }'
}

section=$tmp/b4.md
{
  echo "## B4: syscall tracepoint overhead"
  echo
  section_header
  echo "Workload: close(5000) (EBADF) $n times; M calls/s measured inside the workload"
  echo "from wall time after the tracer attached, median of $runs runs. Both tools attach"
  echo "raw_syscalls:sys_enter and raw_syscalls:sys_exit, so every call fires two probes."
  echo "\"failed\" means the row did not run (the tool's error is below the table)."
  echo
  echo "| variant | M calls/s | ns added per call | Sonde vs bpftrace (goal: >= 1x) |"
  echo "|---|---:|---:|---|"
  echo "| no probe | $base | 0 | |"
  echo "| bpftrace, empty probes | $b_empty | $(overhead "$b_empty") | |"
  echo "| Sonde, empty probes | $s_empty | $(overhead "$s_empty") | $(versus "$s_empty" "$b_empty") |"
  echo "| bpftrace, \`@[pid] = count()\` on both | $b_count | $(overhead "$b_count") | |"
  echo "| Sonde, \`c[pid()]++\` on both | $s_count | $(overhead "$s_count") | $(versus "$s_count" "$b_count") |"
  echo "| Sonde, \`c[pid()] <<< 1\` on both (per-CPU aggregate) | $s_stats | $(overhead "$s_stats") | $(versus "$s_stats" "$b_count") |"
  echo
  echo "Goal (benchmarks.md): Sonde's per-pid count >= 1.5x bpftrace's rate, i.e. within"
  echo "10 % of the empty-probe floor: $(awk -v s="$s_count" -v b="$b_count" 'BEGIN { if (s == "failed" || b == "failed") print "n/a"; else printf "%.2fx, %s", s / b, ((s >= 1.5 * b) ? "PASS" : "FAIL") }')."
  first_failure
} > "$section"
write_section b4 "$section"
cat "$section"
