#!/usr/bin/env bash
# B1: per-event cost and thread scaling (benchmarks.md B1, the seed
# "ust-vs-systemtap-benchmark"). bench_target runs T threads that each fire
# `single_trace` N times with the loop counter; each tool records every event.
# CPU is user + sys of the whole run (tool, target and, for LTTng, its daemons),
# median of B1_RUNS (5) runs, taken in turns over all rows; "fixed" is the
# same tool on 0 events (start-up, compile, attach), subtracted before dividing
# by the events fired, as is the baseline's own per-event CPU.
# Rows: baseline; Sonde text (file, /dev/null); Sonde relay, block mode (binary
# trace -b -o DIR, text to a file, to /dev/null); Sonde netlink, block mode
# (-b -o DIR, text to a file); LTTng-UST; bpftrace count and printf.
# Environment: B1_N events per thread (10,000,000), B1_THREADS ("1 2 4 8"),
# B1_RUNS (5), B1_BPF_SCALE (bpftrace fires N / 20: it traps on every event).
# Writes the B1 section of bench/reports/markers.md ($BENCH_REPORT_DIR/markers.md
# when set: trial runs).
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${B1_N:-10000000}
threads_list=${B1_THREADS:-1 2 4 8}
first_threads=$(echo "$threads_list" | awk '{print $1}')
runs=${B1_RUNS:-5}
n_bpf=$((n / ${B1_BPF_SCALE:-20}))

cd "$tmp"
build_target bench_target "$here/bench_target.c" -pthread
build_target bench_target_lttng "$here/bench_target.c" -DB1_LTTNG -pthread -llttng-ust -ldl
# The VM's speed when a round starts: B2's loop with one rdtsc per iteration
# (8.5-9.3 ns in a normal phase), so a slow phase shows next to the runs.
build_target speed_probe "$here/b2_loop.c" -DB2_RDTSC
speed_ns() { ./speed_probe 20000000 | sed -n 's/.*ns_per_iteration=//p'; }
seed='probe process("./bench_target").mark("single_trace") { printf("%d : %d\n", gettimeofday_ns(), $arg1) }'

# Each tool: CPU of one run on T threads x N events; leaves the events it
# recorded in $tmp/recorded and its output bytes in $tmp/bytes ("n/a" when
# the output is not kept), and may leave a remark (losses) in $tmp/note.
tool_baseline() {
  cpu_seconds ./bench_target "$1" "$2" || return 1
  echo n/a > recorded
  echo n/a > bytes
}
# sonde with OPTIONS and the seed script, the target firing T x N events.
sonde_run() { # T N [OPTIONS...]
  local t=$1 n=$2
  shift 2
  cpu_seconds "$sonde" "$@" -e "$seed" -c "./bench_target $t $n" || return 1
}
# Events recorded and their bytes from sonde's transport summary (records,
# binary record bytes), "n/a" without one; losses go to the note.
summary_counts() {
  local records bytes lost
  read -r records bytes _ lost <<< "$(transport_summary last.err)"
  echo "${records:-n/a}" > recorded
  echo "${bytes:-n/a}" > bytes
  [ "${lost:-0}" = 0 ] || echo "$lost lost" > note
}
# -b -o DIR: a binary trace; the last of the $runs runs (verify_report=1) also
# counts the lines of `sonde report DIR`, noted when they differ.
sonde_binary() { # TRANSPORT T N
  rm -rf trace
  sonde_run "$2" "$3" --transport="$1" -b -o "$tmp/trace" || return 1
  summary_counts
  if [ "$verify_report" = 1 ] && [ "$3" != 0 ]; then
    local lines
    lines=$("$sonde" report trace | wc -l)
    [ "$lines" = "$(cat recorded)" ] || echo "sonde report: $lines lines" >> note
  fi
  rm -rf trace
}
# Text to a file: events counted in the file (a summary count that differs is
# noted); bytes are the transport's binary record bytes for relay and
# netlink, the file's for the text transport.
sonde_text_file() { # T N [OPTIONS...]
  rm -f sonde.out
  sonde_run "$@" -o "$tmp/sonde.out" || return 1
  summary_counts
  local lines
  lines=$(grep -c -E '^-?[0-9]+ : -?[0-9]+$' sonde.out || true)
  [ "$(cat recorded)" = n/a ] || [ "$(cat recorded)" = "$lines" ] || echo "summary: $(cat recorded)" >> note
  [ "$(cat bytes)" != n/a ] || stat -c %s sonde.out > bytes
  echo "$lines" > recorded
  rm -f sonde.out
}
tool_sonde_file() { sonde_text_file "$1" "$2"; }
tool_sonde_null() {
  sonde_run "$1" "$2" -o /dev/null || return 1
  echo n/a > recorded
  echo n/a > bytes
}
tool_sonde_relay_binary() { sonde_binary relay "$1" "$2"; }
tool_sonde_relay_file() { sonde_text_file "$1" "$2" --transport=relay; }
tool_sonde_relay_null() {
  sonde_run "$1" "$2" --transport=relay -o /dev/null || return 1
  summary_counts
}
tool_sonde_netlink_binary() { sonde_binary netlink "$1" "$2"; }
tool_sonde_netlink_file() { sonde_text_file "$1" "$2" --transport=netlink; }
# LTTng: events recorded = fired - the channel's discarded events (exact
# counters); babeltrace2 takes about 1 us an event to print a trace, so it
# counts the events of one run only: the last at the first thread count.
tool_lttng() {
  local before after target discarded events
  rm -rf lttng-trace
  before=$(lttng_daemon_cpu)
  lttng create b1 --output="$tmp/lttng-trace" > /dev/null
  lttng enable-channel -u --subbuf-size=1M --num-subbuf=16 chan > /dev/null
  lttng enable-event -u -c chan bench:single_trace > /dev/null
  lttng start > /dev/null
  target=$(cpu_seconds ./bench_target_lttng "$1" "$2") || target=failed
  lttng stop > /dev/null
  discarded=$(lttng_discarded b1)
  lttng destroy > /dev/null
  after=$(lttng_daemon_cpu)
  [ "$target" != failed ] || return 1
  awk -v t="$target" -v a="$after" -v b="$before" 'BEGIN {printf "%.3f\n", t + a - b}'
  if [ "$discarded" = -1 ]; then
    echo n/a > recorded
    echo "LTTng could not count its discarded events" > note
  else
    echo $(($1 * $2 - discarded)) > recorded
    [ "$discarded" = 0 ] || echo "$discarded lost" > note
  fi
  if [ "$verify_report" = 1 ] && [ "$1" = "$first_threads" ] && [ "$2" != 0 ]; then
    events=$(babeltrace2 lttng-trace 2> /dev/null | grep -c 'bench:single_trace' || true)
    [ "$events" = "$(cat recorded)" ] || echo "babeltrace2: $events events" >> note
  fi
  du -sb lttng-trace | cut -f1 > bytes
  rm -rf lttng-trace
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

# run_once TOOL T N: one run's CPU; on failure, nothing (the first failure's
# error output is kept for the report).
run_once() {
  rm -f recorded bytes note
  if ! "$@" 2> run.err; then
    [ -s first.err ] || { echo "$*:"; head -5 run.err; } > first.err
    return 1
  fi
}

# median_cpu TOOL T N: the median CPU of $runs runs, or "failed" (the fixed
# costs; the rows go round in turns, below).
median_cpu() {
  local values=() v
  for ((r = 0; r < runs; r++)); do
    v=$(run_once "$@") || { echo failed; return; }
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
  "tool_sonde_relay_binary|Sonde relay (block), binary trace (-b -o DIR)|$n"
  "tool_sonde_relay_file|Sonde relay (block), text to a file|$n"
  "tool_sonde_relay_null|Sonde relay (block), text to /dev/null|$n"
  "tool_sonde_netlink_binary|Sonde netlink (block), binary trace (-b -o DIR)|$n"
  "tool_sonde_netlink_file|Sonde netlink (block), text to a file|$n")
[ "$have_lttng" = 1 ] && tools+=("tool_lttng|LTTng-UST 2.13, 16 x 1 MiB sub-buffers|$n")
[ "$have_bpftrace" = 1 ] && tools+=("tool_bpftrace_count|bpftrace USDT, @c = count()|$n_bpf"
  "tool_bpftrace_printf|bpftrace USDT, printf|$n_bpf")

verify_report=0 # set to 1 on the last round of runs, below
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
  echo "$runs runs taken in turns over all rows. Fixed s: the same tool on 0 events."
  echo "ns/event = (CPU - fixed - baseline's"
  echo "CPU for as many events) / events fired. Relay and netlink: events recorded and"
  echo "bytes/event from sonde's closing summary (records delivered, binary record bytes),"
  echo "except that \"text to a file\" counts the file's lines; losses and counts that"
  echo "disagree are noted next to them. Binary traces: the last run's trace is also"
  echo "printed with \`sonde report DIR\` (a line count that differs is noted); \"text\" rows"
  echo "have \`sonde\` (relay, netlink) or the target (text) format every event. LTTng-UST:"
  echo "events recorded = fired - the channel's discarded events; babeltrace2 counts the"
  echo "trace of the last run at $first_threads thread(s) (a count that differs is noted)."
  echo
  echo "| threads | tool | events fired | CPU s | fixed s | ns/event over baseline | events recorded | bytes/event |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
} > "$section"

# The runs go round all rows $runs times rather than repeating each row:
# this VM has phases of minutes in which runs are slower (where the host puts
# its vCPUs, for one), which would otherwise take all runs of one row. The
# counts kept are the last round's.
declare -A cpus failed_rows speed
for ((r = 0; r < runs; r++)); do
  verify_report=$((r == runs - 1))
  for t in $threads_list; do
    speed[$r,$t]=$(speed_ns)
    for entry in "${tools[@]}"; do
      IFS='|' read -r tool label per_thread <<< "$entry"
      [ -z "${failed_rows[$tool,$t]:-}" ] || continue
      if ! v=$(run_once "$tool" "$t" "$per_thread"); then
        failed_rows[$tool,$t]=1
        continue
      fi
      cpus[$tool,$t]="${cpus[$tool,$t]:-} $v"
      for f in recorded bytes note; do
        if [ -e $f ]; then cp $f "$f.$tool.$t"; else rm -f "$f.$tool.$t"; fi
      done
    done
  done
done

# ns_over_baseline CPU FIXED BASE_CPU BASE_EVENTS EVENTS: ns/event over the
# baseline's CPU for as many events, "n/a" when a part is missing.
ns_over_baseline() {
  awk -v c="$1" -v f="$2" -v b="$3" -v be="$4" -v e="$5" \
    'BEGIN { if (c == "failed" || f == "failed" || b == "failed" || e == 0) print "n/a";
             else if (b == c) print "0";
             else printf "%.1f", ((c - f) - b / be * e) * 1e9 / e }'
}

# bytes_per_event BYTES RECORDED
bytes_per_event() {
  awk -v b="$1" -v r="$2" 'BEGIN { if (b == "n/a" || r == "n/a" || r == 0) print "n/a"; else printf "%.1f", b / r }'
}

declare -A ns_per_event base_cpus
for t in $threads_list; do
  base_cpu=
  for entry in "${tools[@]}"; do
    IFS='|' read -r tool label per_thread <<< "$entry"
    fired=$((t * per_thread))
    if [ -n "${failed_rows[$tool,$t]:-}" ]; then
      cpu=failed
    else
      cpu=$(printf '%s\n' ${cpus[$tool,$t]} | median)
    fi
    [ -z "$base_cpu" ] && base_cpu=$cpu base_events=$fired && base_cpus[$t]=$cpu
    recorded=$(cat "recorded.$tool.$t" 2> /dev/null || echo n/a)
    bytes=$(cat "bytes.$tool.$t" 2> /dev/null || echo n/a)
    note=$(paste -sd';' "note.$tool.$t" 2> /dev/null || true)
    ns=$(ns_over_baseline "$cpu" "${fixed[$tool]}" "$base_cpu" "$base_events" "$fired")
    per_event_bytes=$(bytes_per_event "$bytes" "$recorded")
    [ "$cpu" = failed ] && recorded=n/a per_event_bytes=n/a note=
    ns_per_event[$tool,$t]=$ns
    echo "| $t | $label | $fired | $cpu | ${fixed[$tool]} | $ns | $recorded${note:+ ($note)} | $per_event_bytes |" >> "$section"
  done
done

# The relay (-b) row's runs one by one (against the median baseline), each
# with the speed probe of its round, then the B1 goals judged on the medians.
relay_runs_and_goals() {
  local row=tool_sonde_relay_binary t cpu r line values=() lost=()
  echo
  echo "Sonde relay (-b), ns/event of each run in round order (in brackets, the speed probe's"
  echo "ns/iteration on one core at the round's start: a phase where the host slows the VM's"
  echo "CPUs shows there):"
  echo
  for t in $threads_list; do
    line= r=0
    for cpu in ${cpus[$row,$t]:-}; do
      line+="${line:+, }$(ns_over_baseline "$cpu" "${fixed[$row]}" "${base_cpus[$t]}" $((t * n)) $((t * n))) (${speed[$r,$t]})"
      r=$((r + 1))
    done
    echo "- $t threads: ${line:-failed}"
    values+=("${ns_per_event[$row,$t]:-n/a}")
  done
  for t in $threads_list; do
    for row in tool_sonde_relay_binary tool_sonde_relay_file tool_sonde_relay_null \
      tool_sonde_netlink_binary tool_sonde_netlink_file; do
      if grep -q lost "note.$row.$t" 2> /dev/null; then lost+=("$row at $t"); fi
    done
  done
  echo
  echo "Goals (Sonde relay, binary trace, medians):"
  echo
  printf '%s\n' "${values[@]}" | awk -v list="${values[*]}" '
    $1 == "n/a" { missing = 1 } $1 != "n/a" { if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 }
    END {
      if (missing) { print "- <= 15 ns/event and within 10 % across threads: n/a (a row failed)"; exit }
      printf "- <= 15 ns/event at every thread count (%s): %s\n", list, max <= 15 ? "met" : "**not met**"
      printf "- within 10 %% from the fewest to the most threads (largest / smallest = %.2f): %s\n",
        max / min, max <= 1.1 * min ? "met" : "**not met**" }'
  local bytes=() b
  row=tool_sonde_relay_binary
  for t in $threads_list; do
    b=$(bytes_per_event "$(cat "bytes.$row.$t" 2> /dev/null || echo n/a)" \
      "$(cat "recorded.$row.$t" 2> /dev/null || echo n/a)")
    bytes+=("$b")
  done
  printf -- '- <= 8 bytes/event (%s): %s\n' "${bytes[*]}" \
    "$(printf '%s\n' "${bytes[@]}" | awk '$1 == "n/a" || $1 > 8 { bad = 1 } END { print bad ? "**not met**" : "met" }')"
  if [ ${#lost[@]} = 0 ]; then
    echo "- nothing lost in block mode (Sonde relay and netlink rows): met"
  else
    echo "- nothing lost in block mode: **not met** (${lost[*]})"
  fi
}

{
  echo
  echo "Ratios (ns/event):"
  echo
  for t in $threads_list; do
    echo "- $t threads: Sonde text (file) / LTTng-UST = $(ratio "${ns_per_event[tool_sonde_file,$t]:-n/a}" "${ns_per_event[tool_lttng,$t]:-n/a}");" \
      "bpftrace count / Sonde text (file) = $(ratio "${ns_per_event[tool_bpftrace_count,$t]:-n/a}" "${ns_per_event[tool_sonde_file,$t]:-n/a}");" \
      "Sonde relay (file) / LTTng-UST = $(ratio "${ns_per_event[tool_sonde_relay_file,$t]:-n/a}" "${ns_per_event[tool_lttng,$t]:-n/a}");" \
      "Sonde relay (-b) / LTTng-UST = $(ratio "${ns_per_event[tool_sonde_relay_binary,$t]:-n/a}" "${ns_per_event[tool_lttng,$t]:-n/a}");" \
      "relay / netlink (-b) = $(ratio "${ns_per_event[tool_sonde_relay_binary,$t]:-n/a}" "${ns_per_event[tool_sonde_netlink_binary,$t]:-n/a}")"
  done
  relay_runs_and_goals
  first_failure
} >> "$section"
write_section b1 "$section"
cat "$section"
