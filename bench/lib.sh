# Sourced by the tracer benchmarks (markers/, transports/) after common.sh, with
# `here` (the benchmark's folder), `report` (its report file) and `report_title`
# set: building targets, CPU and wall time, sonde's transport summary, the LTTng
# session daemon and report sections.
cc=$(command -v clang-19 || command -v cc)

# build_target OUT SOURCE [cc flags...]: an -O2 build against sonde/sdt.h and
# the LTTng provider headers in $here.
build_target() {
  local out=$1 src=$2
  shift 2
  "$cc" -O2 -g -Wall -Wextra -Werror -I"$top/include" -I"$here" "$@" "$src" -o "$out"
}

# wall_cpu_seconds CMD...: "WALL CPU" seconds of CMD, CPU being user + sys of
# CMD and its children (bash's `times` in a subshell: getrusage of the
# waited-for children); CMD may be a shell function. CMD's own output goes to
# $tmp/last.out and $tmp/last.err. Fails if CMD does.
wall_cpu_seconds() {
  local usage
  usage=$(
    start=$EPOCHREALTIME
    ("$@" > "$tmp/last.out" 2> "$tmp/last.err") || exit 1
    end=$EPOCHREALTIME
    echo "$start $end"
    times
  ) || {
    echo "failed: $*" >&2
    head -5 "$tmp/last.err" >&2
    return 1
  }
  # Line 1: start and end; line 3 (`times`' second): the children's "user sys",
  # e.g. "0m1.250s 0m0.010s".
  echo "$usage" | awk 'NR == 1 { wall = $2 - $1 }
    NR == 3 { split($1, u, /[ms]/); split($2, s, /[ms]/)
              printf "%.3f %.3f\n", wall, u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

# cpu_seconds CMD...: the CPU seconds of wall_cpu_seconds.
cpu_seconds() {
  local wall_cpu
  wall_cpu=$(wall_cpu_seconds "$@") || return 1
  echo "${wall_cpu#* }"
}

# transport_summary FILE: "RECORDS BYTES MB/S LOST" from the closing line sonde
# prints on stderr for the relay and netlink transports, e.g.
#   sonde: relay transport (block mode): 4000000 records, 31975088 bytes, 26.2 MB/s, 0 lost
# Prints nothing when FILE has no such line.
transport_summary() {
  sed -n -E 's/^sonde: [a-z]+ transport \([a-z]+ mode\): ([0-9]+) records, ([0-9]+) bytes, ([0-9.]+) MB\/s, ([0-9]+) lost.*/\1 \2 \3 \4/p' "$1" | tail -1
}

# ratio A B [digits]: A / B, or n/a.
ratio() {
  awk -v a="$1" -v b="$2" -v d="${3:-2}" \
    'BEGIN { if (a == "n/a" || a == "" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.*f\n", d, a / b }'
}

# CPU seconds (user + sys) of every lttng-sessiond and lttng-consumerd process so
# far, from /proc/PID/stat: their share of LTTng's cost.
lttng_daemon_cpu() {
  local hz pids
  hz=$(getconf CLK_TCK)
  pids=$(pgrep -x 'lttng-(sessiond|consumerd)' || true)
  for pid in $pids; do cat "/proc/$pid/stat" 2> /dev/null; done |
    awk -v hz="$hz" '{sub(/^.*\) /, ""); t += $12 + $13} END {printf "%.3f\n", t / hz}'
}

# Starts a root session daemon for userspace tracing unless one runs; it is
# stopped (by its pid) when the script exits.
sessiond_pid=
lttng_start_daemon() {
  if lttng list > /dev/null 2>&1; then return 0; fi
  lttng-sessiond --no-kernel > "$tmp/sessiond.log" 2>&1 &
  sessiond_pid=$!
  for _ in $(seq 50); do
    lttng list > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "lttng-sessiond did not start:" >&2
  cat "$tmp/sessiond.log" >&2
  return 1
}
lttng_stop_daemon() {
  if [ -n "$sessiond_pid" ]; then
    kill "$sessiond_pid" 2> /dev/null || true
    wait "$sessiond_pid" 2> /dev/null || true
  fi
  rm -rf "$tmp"
}
trap lttng_stop_daemon EXIT

# write_section NAME FILE: replaces NAME's section of $report (between
# `<!-- NAME -->` and `<!-- /NAME -->`) with FILE, keeping the other sections;
# a report or section that does not exist yet is added.
write_section() {
  local name=$1 file=$2
  [ -f "$report" ] || printf '# %s\n' "$report_title" > "$report"
  grep -qxF "<!-- $name -->" "$report" || printf '\n<!-- %s -->\n<!-- /%s -->\n' "$name" "$name" >> "$report"
  awk -v name="$name" -v file="$file" '
    $0 == "<!-- " name " -->" { print; while ((getline line < file) > 0) print line; skip = 1; next }
    $0 == "<!-- /" name " -->" { skip = 0 }
    !skip { print }' "$report" > "$report.new"
  mv "$report.new" "$report"
}

# Events LTTng session $1's channels discarded, or -1 when LTTng could not
# count them (it shows 2^64 - 1 then).
lttng_discarded() {
  lttng list "$1" | sed -n 's/^ *Discarded events: *//p' |
    awk '$1 < 1e18 {t += $1} $1 >= 1e18 {bad = 1} END {printf "%d\n", bad ? -1 : t}'
}

# The first failing run's command and error lines (first.err), if any run failed.
first_failure() {
  [ -s first.err ] || return 0
  echo
  echo "First failure:"
  echo
  echo '```'
  cat first.err
  echo '```'
}

# The header every section starts with: date, machine, commit, binary.
section_header() {
  echo "Run $(date -u '+%F %H:%M UTC') on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')),"
  echo "commit $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- 2> /dev/null || echo ' + uncommitted changes'),"
  echo "sonde: \`${sonde#"$top"/}\`. $("$cc" --version | head -1)."
}

# result_of KEY CMD...: runs CMD in the scratch directory, which writes
# "KEY=VALUE" to ./result; prints VALUE, or nothing if CMD failed (its command
# and first error lines then go to first.err, for first_failure).
result_of() {
  local key=$1
  shift
  rm -f result
  "$@" > run.out 2> run.err || true
  [ -s result ] || [ -s first.err ] || { echo "$*:"; head -5 run.err; } > first.err
  sed -n "s/.*$key=//p" result 2> /dev/null
}

# median_result KEY CMD...: the median VALUE of $runs runs of result_of, or
# "failed" as soon as one fails.
median_result() {
  local key=$1 values=() v
  shift
  for ((r = 0; r < runs; r++)); do
    v=$(result_of "$key" "$@")
    if [ -z "$v" ]; then
      echo "failed"
      return
    fi
    values+=("$v")
  done
  printf '%s\n' "${values[@]}" | median
}
