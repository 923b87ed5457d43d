#!/usr/bin/env bash
# B2: the cost of a marker in a loop of an xorshift step, disabled and enabled,
# next to <sys/sdt.h> and LTTng-UST (benchmarks.md B2). ns per iteration is the
# loop's process CPU time measured inside the target, median of B2_RUNS (3) runs;
# "over baseline" subtracts the loop without a marker. Two rows read a clock
# instead of firing a marker: what timestamping an event costs any tracer here.
# Environment: B2_N iterations (100,000,000); the rows that record run B2_N / 10,
# the trap row B2_N / 100. Writes the B2 section of bench/reports/markers.md.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${B2_N:-100000000}
n_slow=$((n / 10))
n_trap=$((n / 100))
runs=${B2_RUNS:-3}

cd "$tmp"
build_target b2_none "$here/b2_loop.c"
build_target b2_sonde "$here/b2_loop.c" -DB2_SONDE
build_target b2_sdt "$here/b2_loop.c" -DB2_SDT
build_target b2_lttng "$here/b2_loop.c" -DB2_LTTNG -llttng-ust -ldl
build_target b2_rdtsc "$here/b2_loop.c" -DB2_RDTSC
build_target b2_clock "$here/b2_loop.c" -DB2_CLOCK

# median_run CMD...: the median ns/iteration of $runs runs, or "failed".
median_run() { median_result ns_per_iteration "$@"; }

sonde_attached() { # SCRIPT ITERATIONS [sonde options...]
  local script=$1 iterations=$2
  shift 2
  "$sonde" "$@" -e "$script" -c "./b2_sonde $iterations $tmp/result"
}

sonde_relay_trace() { # SCRIPT ITERATIONS: a binary relay trace (-b) of the run
  rm -rf "$tmp/b2-relay"
  sonde_attached "$1" "$2" --transport=relay -b -o "$tmp/b2-relay"
}

sonde_trap() { # ITERATIONS: the stock 1-byte NOP marker, attached through a trap
  "$sonde" -e 'probe process("./b2_sdt").mark("m") {}' -c "./b2_sdt $1 $tmp/result"
}

lttng_session_on() { # ITERATIONS
  lttng create b2 --output="$tmp/b2-trace" > /dev/null
  lttng enable-channel -u --subbuf-size=1M --num-subbuf=16 chan > /dev/null
  lttng enable-event -u -c chan bench:b2_step > /dev/null
  lttng start > /dev/null
  ./b2_lttng "$1" "$tmp/result" || true
  lttng stop > /dev/null
  lttng destroy > /dev/null
}

rows=()
add_row() { rows+=("$1|$2|$3|$4"); } # label|iterations|ns|goal

base=$(median_run ./b2_none "$n" result)
add_row "no marker (baseline)" "$n" "$base" ""
add_row "sonde marker, not attached" "$n" "$(median_run ./b2_sonde "$n" result)" "<= 0.5 ns"
add_row "<sys/sdt.h> marker, not attached" "$n" "$(median_run ./b2_sdt "$n" result)" ""
add_row "LTTng-UST tracepoint, session off" "$n" "$(median_run ./b2_lttng "$n" result)" ""
add_row "no marker, one rdtsc (a record's timestamp)" "$n" "$(median_run ./b2_rdtsc "$n" result)" ""
add_row "no marker, one clock_gettime(CLOCK_MONOTONIC)" "$n" "$(median_run ./b2_clock "$n" result)" ""
add_row "sonde marker, empty handler" "$n" \
  "$(median_run sonde_attached 'probe process("./b2_sonde").mark("m") {}' "$n")" "<= 8 ns"
add_row "sonde marker, handler reads the TSC (get_cycles())" "$n" \
  "$(median_run sonde_attached 'probe process("./b2_sonde").mark("m") { if (get_cycles() == 1) exit() }' "$n")" ""
add_row "sonde marker, handler stores \$arg1 in a global" "$n" \
  "$(median_run sonde_attached 'global x; probe process("./b2_sonde").mark("m") { x = $arg1 }' "$n")" ""
add_row "sonde marker, printf(\"%d\\n\", \$arg1), text transport to /dev/null" "$n_slow" \
  "$(median_run sonde_attached 'probe process("./b2_sonde").mark("m") { printf("%d\n", $arg1) }' "$n_slow" -o /dev/null)" ""
add_row "sonde marker, B1's printf(\"%d : %d\\n\", gettimeofday_ns(), \$arg1), relay (-b)" "$n_slow" \
  "$(median_run sonde_relay_trace 'probe process("./b2_sonde").mark("m") { printf("%d : %d\n", gettimeofday_ns(), $arg1) }' "$n_slow")" ""
add_row "<sys/sdt.h> marker, empty sonde handler (trap path)" "$n_trap" "$(median_run sonde_trap "$n_trap")" ""
if lttng_start_daemon; then
  add_row "LTTng-UST tracepoint, session on (16 x 1 MiB, discard)" "$n_slow" \
    "$(median_run lttng_session_on "$n_slow")" ""
fi

section=$tmp/b2.md
{
  echo "## B2: disabled and enabled marker cost"
  echo
  section_header
  echo "Loop: one xorshift step per iteration plus the marker; ns/iteration is the"
  echo "loop's process CPU time measured inside the target (clock_gettime"
  echo "CLOCK_PROCESS_CPUTIME_ID), median of $runs runs. \"failed\" means the row did not run"
  echo "(the tool's error is below the table)."
  echo
  echo "| variant | iterations | ns/iteration | over baseline, ns | goal |"
  echo "|---|---:|---:|---:|---|"
  for row in "${rows[@]}"; do
    IFS='|' read -r label iterations ns goal <<< "$row"
    over=$(awk -v a="$ns" -v b="$base" 'BEGIN { if (a == "failed") print "n/a"; else printf "%.2f", a - b }')
    echo "| $label | $iterations | $ns | $over | $goal |"
  done
  first_failure
} > "$section"
write_section b2 "$section"
cat "$section"
