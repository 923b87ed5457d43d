#!/usr/bin/env bash
# B1: per-event cost and thread scaling (benchmarks.md B1, the seed
# "ust-vs-systemtap-benchmark"). bench_target runs T threads that each fire
# `single_trace` N times with the loop counter; each tool records every event.
# CPU is user + sys of the whole run (tool, target and, for LTTng, its daemons),
# median of B1_RUNS (3) runs; "fixed" is the same tool on 0 events (start-up,
# compile, attach), subtracted before dividing by the events fired, as is the
# baseline's own per-event CPU.
# Environment: B1_N events per thread (10,000,000), B1_THREADS ("1 2 4 8"),
# B1_BPF_SCALE (bpftrace fires N / 20: it traps on every event).
# Writes the B1 section of bench/reports/markers.md.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${B1_N:-10000000}
threads_list=${B1_THREADS:-1 2 4 8}
runs=${B1_RUNS:-3}
n_bpf=$((n / ${B1_BPF_SCALE:-20}))

cd "$tmp"
build_target bench_target "$here/bench_target.c" -pthread
build_target bench_target_lttng "$here/bench_target.c" -DB1_LTTNG -pthread -llttng-ust -ldl
seed='probe process("./bench_target").mark("single_trace") { printf("%d : %d\n", gettimeofday_ns(), $arg1) }'

# Each tool: CPU of one run on T threads x N events; leaves the events it
# recorded in $tmp/recorded and its output bytes in $tmp/bytes ("n/a" when
# the output is not kept).
tool_baseline() {
  cpu_seconds ./bench_target "$1" "$2" || return 1
  echo n/a > recorded
  echo n/a > bytes
}
sonde_text() { # T N OUTPUT [OPTIONS...]
  rm -f sonde.out
  local t=$1 n=$2 out=$3
  shift 3
  cpu_seconds "$sonde" "$@" -o "$out" -e "$seed" -c "./bench_target $t $n" || return 1
}
# Relay: records counted from the output, bytes/event are the transport's binary
# bytes (sonde -v reports them), not the formatted text's.
tool_sonde_relay_file() {
  sonde_text "$1" "$2" "$tmp/sonde.out" --transport=relay -v || return 1
  grep -c -E '^-?[0-9]+ : -?[0-9]+$' sonde.out > recorded || true
  sed -n 's/.*relay transport: [0-9]* records, \([0-9]*\) bytes.*/\1/p' last.err > bytes
  [ -s bytes ] || echo n/a > bytes
}
tool_sonde_relay_null() {
  sonde_text "$1" "$2" /dev/null --transport=relay -v || return 1
  sed -n 's/.*relay transport: \([0-9]*\) records.*/\1/p' last.err > recorded
  [ -s recorded ] || echo n/a > recorded
  sed -n 's/.*relay transport: [0-9]* records, \([0-9]*\) bytes.*/\1/p' last.err > bytes
  [ -s bytes ] || echo n/a > bytes
}
tool_sonde_file() {
  sonde_text "$1" "$2" "$tmp/sonde.out" || return 1
  grep -c -E '^-?[0-9]+ : -?[0-9]+$' sonde.out > recorded || true
  stat -c %s sonde.out > bytes
}
tool_sonde_null() {
  sonde_text "$1" "$2" /dev/null || return 1
  echo n/a > recorded
  echo n/a > bytes
}
tool_lttng() {
  local before after target
  rm -rf lttng-trace
  before=$(lttng_daemon_cpu)
  lttng create b1 --output="$tmp/lttng-trace" > /dev/null
  lttng enable-channel -u --subbuf-size=1M --num-subbuf=16 chan > /dev/null
  lttng enable-event -u -c chan bench:single_trace > /dev/null
  lttng start > /dev/null
  target=$(cpu_seconds ./bench_target_lttng "$1" "$2") || target=failed
  lttng stop > /dev/null
  lttng destroy > /dev/null
  after=$(lttng_daemon_cpu)
  [ "$target" != failed ] || return 1
  awk -v t="$target" -v a="$after" -v b="$before" 'BEGIN {printf "%.3f\n", t + a - b}'
  babeltrace2 lttng-trace 2> /dev/null | grep -c 'bench:single_trace' > recorded || true
  du -sb lttng-trace | cut -f1 > bytes
}
tool_bpftrace_count() {
  cpu_seconds bpftrace -e 'usdt:./bench_target:bench:single_trace { @c = count(); }' \
    -c "./bench_target $1 $2" || return 1
  { sed -n 's/^@c: //p' "$tmp/last.out"; echo 0; } | head -1 > recorded
  echo n/a > bytes
}
tool_bpftrace_printf() {
  rm -f bpftrace.out
  cpu_seconds bpftrace -o "$tmp/bpftrace.out" \
    -e 'usdt:./bench_target:bench:single_trace { printf("%lld : %d\n", nsecs, arg0); }' \
    -c "./bench_target $1 $2" || return 1
  grep -c -E '^[0-9]+ : -?[0-9]+$' bpftrace.out > recorded || true
  stat -c %s bpftrace.out > bytes
}

# median_cpu TOOL T N: the median CPU of $runs runs, or "failed" (the first
# failure's error output is kept for the report).
median_cpu() {
  local values=() v
  for ((r = 0; r < runs; r++)); do
    if ! v=$("$@" 2> run.err); then
      [ -s first.err ] || { echo "$*:"; head -5 run.err; } > first.err
      echo failed
      return
    fi
    values+=("$v")
  done
  printf '%s\n' "${values[@]}" | median
}

have_bpftrace=0
bpftrace -e 'BEGIN { exit(); }' > /dev/null 2>&1 && have_bpftrace=1
have_lttng=0
lttng_start_daemon && have_lttng=1

# tool label events-per-thread
tools=("tool_baseline|baseline (marker not attached)|$n"
  "tool_sonde_file|Sonde text, output to a file|$n"
  "tool_sonde_null|Sonde text, output to /dev/null|$n"
  "tool_sonde_relay_file|Sonde relay (block), output to a file|$n"
  "tool_sonde_relay_null|Sonde relay (block), output to /dev/null|$n")
[ "$have_lttng" = 1 ] && tools+=("tool_lttng|LTTng-UST 2.13, 16 x 1 MiB sub-buffers|$n")
[ "$have_bpftrace" = 1 ] && tools+=("tool_bpftrace_count|bpftrace USDT, @c = count()|$n_bpf"
  "tool_bpftrace_printf|bpftrace USDT, printf|$n_bpf")

declare -A fixed
for entry in "${tools[@]}"; do
  IFS='|' read -r tool _ _ <<< "$entry"
  fixed[$tool]=$(median_cpu "$tool" 1 0)
done

section=$tmp/b1.md
{
  echo "## B1: per-event cost and thread scaling"
  echo
  section_header
  echo "$n events per thread ($n_bpf for bpftrace). CPU s: user + sys of the whole run, median of"
  echo "$runs runs. Fixed s: the same tool on 0 events. ns/event = (CPU - fixed - baseline's"
  echo "CPU for as many events) / events fired. Relay bytes/event: binary record bytes."
  echo "Sonde netlink transport: not built yet (issue 5)."
  echo
  echo "| threads | tool | events fired | CPU s | fixed s | ns/event over baseline | events recorded | bytes/event |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
} > "$section"

declare -A ns_per_event
for t in $threads_list; do
  base_cpu=
  for entry in "${tools[@]}"; do
    IFS='|' read -r tool label per_thread <<< "$entry"
    fired=$((t * per_thread))
    cpu=$(median_cpu "$tool" "$t" "$per_thread")
    [ -z "$base_cpu" ] && base_cpu=$cpu base_events=$fired
    recorded=$(cat recorded 2> /dev/null || echo n/a)
    bytes=$(cat bytes 2> /dev/null || echo n/a)
    ns=$(awk -v c="$cpu" -v f="${fixed[$tool]}" -v b="$base_cpu" -v be="$base_events" -v e="$fired" \
      'BEGIN { if (c == "failed" || f == "failed" || e == 0) print "n/a";
               else if (b == c) print "0";
               else printf "%.1f", ((c - f) - b / be * e) * 1e9 / e }')
    per_event_bytes=$(awk -v b="$bytes" -v r="$recorded" \
      'BEGIN { if (b == "n/a" || r == "n/a" || r == 0) print "n/a"; else printf "%.1f", b / r }')
    [ "$cpu" = failed ] && recorded=n/a per_event_bytes=n/a
    ns_per_event[$tool,$t]=$ns
    echo "| $t | $label | $fired | $cpu | ${fixed[$tool]} | $ns | $recorded | $per_event_bytes |" >> "$section"
  done
  echo "| $t | Sonde netlink | | issue 5 | | | | |" >> "$section"
done

{
  echo
  echo "Ratios (ns/event):"
  echo
  for t in $threads_list; do
    echo "- $t threads: Sonde text (file) / LTTng-UST = $(ratio "${ns_per_event[tool_sonde_file,$t]:-n/a}" "${ns_per_event[tool_lttng,$t]:-n/a}");" \
      "bpftrace count / Sonde text (file) = $(ratio "${ns_per_event[tool_bpftrace_count,$t]:-n/a}" "${ns_per_event[tool_sonde_file,$t]:-n/a}");" \
      "Sonde relay (file) / LTTng-UST = $(ratio "${ns_per_event[tool_sonde_relay_file,$t]:-n/a}" "${ns_per_event[tool_lttng,$t]:-n/a}")"
  done
  if [ -s first.err ]; then
    echo
    echo "First failure:"
    echo
    echo '```'
    cat first.err
    echo '```'
  fi
} >> "$section"
write_section b1 "$section"
cat "$section"
