#!/usr/bin/env bash
# B3: transport throughput and loss (benchmarks.md B3, the seed
# "netlink-vs-relayfs"). b3_target fires `record` as fast as it can; the handler
# emits a ~100-byte record each time (two ints and a constant 91-character
# string). For each transport (relay, netlink, text), mode (block, discard),
# buffer size (-s) and total volume, one row: records fired, delivered and lost,
# MB/s of record bytes delivered, CPU ns/record. Output goes to disk: `-b -o DIR`
# for relay and netlink, `-o FILE` for text, deleted after each run (one run's
# output on disk at a time). LTTng-UST rows: a 100-byte text array, 4 x 4 MiB
# sub-buffers, written to disk; discard mode and blocking mode.
# Each row is the run with the median wall time of B3_RUNS runs, taken in turns
# over all rows; "fixed" is the same configuration on 0 records (start-up,
# compile, attach, buffer set-up; median of at least 5 runs), subtracted before
# dividing:
#   MB/s = bytes delivered / (wall - fixed wall)
#   ns/record = (CPU - fixed CPU) / records fired
# CPU is user + sys of the whole run: sonde and the target; for LTTng, the
# target, `lttng stop` and the session and consumer daemons (LTTng's wall time
# is the target's alone).
# Environment:
#   B3_VOLUMES     total MB per run ("100 500 1000"; "all": 100 to 1000 in 100s)
#   B3_BUFFERS     -s sizes in MB ("1 2 4 8 16 32")
#   B3_TRANSPORTS  ("relay netlink netlink1 text"; netlink1: one record per
#                  message)   B3_MODES ("block discard")
#   B3_RUNS (3)    B3_THREADS (1 writer thread)   B3_LTTNG (1: LTTng rows)
#   B3_DIR         where outputs are written ($tmp); its free space is checked
#   B3_VERIFY (1)  the last run at the first volume also counts the records
#                  in its output (`sonde report DIR | wc -l`, babeltrace2)
# Writes bench/reports/transports.md ($BENCH_REPORT_DIR/transports.md when set).
set -euo pipefail
source "$(dirname "$0")/../common.sh"
here=$top/bench/transports
report=$reports/transports.md
report_title='Transport benchmarks (B3)'
source "$top/bench/lib.sh"

volumes=${B3_VOLUMES:-100 500 1000}
[ "$volumes" = all ] && volumes=$(seq 100 100 1000 | xargs)
buffers=${B3_BUFFERS:-1 2 4 8 16 32}
transports=${B3_TRANSPORTS:-relay netlink netlink1 text}
modes=${B3_MODES:-block discard}
runs=${B3_RUNS:-3}
threads=${B3_THREADS:-1}
out_dir=$(mkdir -p "${B3_DIR:-$tmp}" && cd "${B3_DIR:-$tmp}" && pwd)
verify=${B3_VERIFY:-1}
first_volume=$(echo "$volumes" | awk '{print $1}')
record_bytes=100 # nominal: the volume is records x 100 bytes (MB = 10^6 bytes)

cd "$tmp"
build_target b3_target "$here/b3_target.c" -pthread
build_target b3_target_lttng "$here/b3_target.c" -DB3_LTTNG -pthread -llttng-ust -ldl
# 4-byte header + 3-4 bytes of varints + a length byte + 91 characters:
# about 100 bytes a record, and 102 as a text line.
text=$(printf '%091d' 0)
script='probe process("./b3_target").mark("record") { printf("%d %d %s\n", $arg1, $arg2, "'"$text"'") }'
: > checks     # problems found on the way, one a line, for the report
: > block_runs # one line per block-mode run that recorded

# The firing loop's seconds b3_target printed ("fired=N seconds=S").
loop_seconds() {
  local s
  s=$(sed -n 's/^fired=[0-9]* seconds=//p' "$tmp/last.out" | tail -1)
  if [ -n "$s" ]; then printf '%.3f\n' "$s"; else echo n/a; fi
}

# Each run prints "WALL CPU DELIVERED LOST BYTES SONDE_MBPS LOOP" (SONDE_MBPS:
# the rate sonde's summary gives, n/a for the others; LOOP: the target's firing
# loop in seconds, as it reports it) or fails. Arguments: the records per
# thread, then whether to count the output's records (1/0).
# The options of a transport column: netlink1 is netlink sending one record per
# message (the classic design the seed measured), netlink its default 4K batches.
transport_options() {
  case $1 in
  netlink1) echo "--transport=netlink --subbuf-size=1" ;;
  *) echo "--transport=$1" ;;
  esac
}
run_sonde_records() { # TRANSPORT MODE BUFFER N VERIFY
  local trace=$out_dir/b3-trace wall_cpu records bytes mbps lost options
  rm -rf "$trace"
  read -r -a options <<< "$(transport_options "$1")"
  wall_cpu=$(wall_cpu_seconds "$sonde" "${options[@]}" --mode="$2" -s "$3" -b -o "$trace" \
    -e "$script" -c "./b3_target $threads $4") || return 1
  read -r records bytes mbps lost <<< "$(transport_summary last.err)"
  if [ -z "$records" ]; then
    echo "no transport summary on stderr" >&2
    rm -rf "$trace"
    return 1
  fi
  if [ "$5" = 1 ]; then
    local lines
    lines=$("$sonde" report "$trace" | wc -l)
    [ "$lines" = "$records" ] ||
      echo "$1 $2 -s $3, $4 records/thread: the summary says $records delivered, \`sonde report\` prints $lines lines" >> checks
  fi
  rm -rf "$trace"
  echo "$wall_cpu $records $lost $bytes $mbps $(loop_seconds)"
}
run_text() { # N VERIFY: records counted as the file's lines
  local file=$out_dir/b3.txt wall_cpu lines
  rm -f "$file"
  wall_cpu=$(wall_cpu_seconds "$sonde" -o "$file" -e "$script" -c "./b3_target $threads $1") || return 1
  lines=$(wc -l < "$file")
  echo "$wall_cpu $lines $((threads * $1 - lines)) $(stat -c %s "$file") n/a $(loop_seconds)"
  rm -f "$file"
}
# LTTng's CPU is the target's, `lttng stop`'s (it waits until the consumer
# has written everything) and the daemons'; its wall time is the target's
# alone: `lttng stop` polls every 200 ms, which would swamp small volumes. What
# that leaves out is writing the last buffer contents (<= 16 MiB).
lttng_traced() { # MODE N
  local start=$EPOCHREALTIME
  if [ "$1" = block ]; then
    LTTNG_UST_ALLOW_BLOCKING=1 ./b3_target_lttng "$threads" "$2"
  else
    ./b3_target_lttng "$threads" "$2"
  fi
  echo "$start $EPOCHREALTIME" > "$tmp/target.wall"
  lttng stop b3 > /dev/null
}
run_lttng() { # MODE N VERIFY: lost = the channel's discarded events
  local trace=$out_dir/b3-lttng before after wall_cpu wall cpu discarded bytes delivered blocking=()
  [ "$1" = block ] && blocking=(--blocking-timeout=inf)
  rm -rf "$trace"
  lttng destroy b3 > /dev/null 2>&1 || true
  lttng create b3 --output="$trace" > /dev/null
  lttng enable-channel -s b3 -u --subbuf-size=4M --num-subbuf=4 "${blocking[@]}" chan > /dev/null
  lttng enable-event -s b3 -u -c chan b3:record > /dev/null
  lttng start b3 > /dev/null
  before=$(lttng_daemon_cpu)
  wall_cpu=$(wall_cpu_seconds lttng_traced "$1" "$2") || wall_cpu=failed
  after=$(lttng_daemon_cpu)
  discarded=$(lttng_discarded b3)
  lttng destroy b3 > /dev/null
  [ "$discarded" != -1 ] || { echo "LTTng could not count its discarded events" >&2; wall_cpu=failed; }
  if [ "$wall_cpu" = failed ]; then
    rm -rf "$trace"
    return 1
  fi
  bytes=$(du -sb "$trace" | cut -f1)
  delivered=$((threads * $2 - discarded))
  if [ "$3" = 1 ] && [ "$2" != 0 ]; then
    local events
    events=$(babeltrace2 "$trace" -c sink.utils.counter 2> /dev/null |
      awk '/Event messages/ {n = $1} END {print n + 0}')
    [ "$events" = "$delivered" ] ||
      echo "LTTng $1, $2 records/thread: fired - discarded = $delivered, babeltrace2 counts $events events" >> checks
  fi
  rm -rf "$trace"
  read -r _ cpu <<< "$wall_cpu"
  wall=$(awk '{printf "%.3f\n", $2 - $1}' "$tmp/target.wall")
  awk -v w="$wall" -v c="$cpu" -v a="$after" -v b="$before" -v d="$delivered" -v l="$discarded" -v y="$bytes" \
    -v loop="$(loop_seconds)" 'BEGIN { printf "%s %.3f %.0f %.0f %.0f n/a %s\n", w, c + a - b, d, l, y, loop }'
}

# free_mb: MB free where the outputs go.
free_mb() { df -P -B1M "$out_dir" | awk 'NR == 2 {print $4}'; }

# measure_once LABEL MODE CHECK CMD... N: one run of CMD (its last two
# arguments: N records per thread, then CHECK, whether to count the output's
# records); prints its line, or fails (the first failure's error output is
# kept for the report). Block-mode runs that lose a record, and runs where
# delivered + lost != fired, go to checks.
measure_once() {
  local label=$1 mode=$2 check=$3 n=${*: -1} v fired delivered lost
  shift 3
  fired=$((threads * n))
  if ! v=$("$@" "$check" 2> run.err); then
    [ -s first.err ] || { echo "$label:"; head -5 run.err; } > first.err
    return 1
  fi
  read -r _ _ delivered lost _ <<< "$v"
  if [ "$n" != 0 ]; then
    [ $((delivered + lost)) = "$fired" ] ||
      echo "$label, $fired fired: $delivered delivered + $lost lost != fired" >> checks
    [ "$mode" != block ] || echo "$label" >> block_runs
    [ "$mode" != block ] || [ "$lost" = 0 ] || echo "$label, $fired fired: $lost lost in block mode" >> checks
  fi
  echo "$v"
}

# The line with the median wall time of the lines on standard input.
median_line() { sort -n -k1,1 | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }

have_lttng=0
[ "${B3_LTTNG:-1}" = 1 ] && lttng_start_daemon && have_lttng=1
first_n=$((first_volume * 1000000 / record_bytes / threads))
fixed_runs=$((runs > 5 ? runs : 5)) # cheap, and subtracted from every row

# Configurations: key|label|mode|buffer column|run function and its arguments
# before N.
configs=()
for transport in $transports; do
  for mode in $modes; do
    if [ "$transport" = text ]; then
      [ "$mode" = block ] && configs+=("text|Sonde text|block|n/a|run_text")
      continue
    fi
    for buffer in $buffers; do
      label="Sonde $transport"
      [ "$transport" = netlink1 ] && label="Sonde netlink, 1 record/message"
      configs+=("$transport,$mode,$buffer|$label|$mode|$buffer|run_sonde_records $transport $mode $buffer")
    done
  done
done
if [ "$have_lttng" = 1 ]; then
  for mode in $modes; do
    configs+=("lttng,$mode|LTTng-UST 2.13|$mode|16 (4 x 4 MiB)|run_lttng $mode")
  done
fi

# Fixed costs first; then the runs go round all rows $runs times rather than
# repeating each row: this VM has phases of minutes in which runs are slower
# (disk writeback, where the host puts its vCPUs), which would otherwise take
# all runs of neighbouring rows.
declare -A result fixed lines_of
for config in "${configs[@]}"; do
  IFS='|' read -r key label mode buffer_column run <<< "$config"
  read -r -a run_cmd <<< "$run"
  values=()
  for ((r = 0; r < fixed_runs; r++)); do
    v=$(measure_once "$label $mode, 0 records" "$mode" 0 "${run_cmd[@]}" 0) || { values=(failed); break; }
    values+=("$v")
  done
  fixed[$key]=$(printf '%s\n' "${values[@]}" | median_line)
done
for ((r = 0; r < runs; r++)); do
  start=$EPOCHREALTIME
  for config in "${configs[@]}"; do
    IFS='|' read -r key label mode buffer_column run <<< "$config"
    read -r -a run_cmd <<< "$run"
    for volume in $volumes; do
      # One record per message runs at tens of MB/s: the first volume tells it
      # (no row for the others).
      [[ $key == netlink1,* ]] && [ "$volume" != "$first_volume" ] && continue
      [ -z "${result[$key,$volume]:-}" ] || continue # failed or skipped
      n=$((volume * 1000000 / record_bytes / threads))
      if [ "$(free_mb)" -lt $((volume * 12 / 10 + 512)) ]; then
        result[$key,$volume]="skipped: $(free_mb) MB free in $out_dir"
        continue
      fi
      # The output's records are counted on the last round at the first volume.
      check=0
      [ "$verify" = 1 ] && [ "$r" = $((runs - 1)) ] && [ "$n" = "$first_n" ] && check=1
      if v=$(measure_once "$label $mode -s $buffer_column" "$mode" "$check" "${run_cmd[@]}" "$n"); then
        lines_of[$key,$volume]+="$v"$'\n'
      else
        result[$key,$volume]=failed
      fi
    done
  done
  echo "b3: round $((r + 1)) of $runs: $(awk -v s="$start" -v e="$EPOCHREALTIME" \
    'BEGIN {printf "%.1f", e - s}') s" >&2
done
for key_volume in "${!lines_of[@]}"; do
  [ -n "${result[$key_volume]:-}" ] || result[$key_volume]=$(printf '%s' "${lines_of[$key_volume]}" | median_line)
done

# The table; MB/s and losses are kept for the goals.
declare -A rate lost_of
section=$tmp/b3.md
{
  echo "## B3: transport throughput and loss"
  echo
  section_header
  echo "$threads writer thread(s) fire \`record\` as fast as they can; each handler run emits"
  echo "one record of about $record_bytes bytes (\`printf(\"%d %d %s\\n\", \$arg1, \$arg2, <91 characters>)\`);"
  echo "volume = records fired x $record_bytes bytes (MB = 10^6 bytes). Relay and netlink write"
  echo "\`-b -o DIR\`, text \`-o FILE\`, LTTng-UST its trace (one 100-byte \`array_text\` field,"
  echo "4 x 4 MiB sub-buffers; block = \`--blocking-timeout=inf\`), all to disk (page cache, no"
  echo "fsync), deleted after each run. Each row is the run with the median wall time of $runs,"
  echo "taken in turns over all rows."
  echo
  echo "- Bytes: sonde's summary (binary record bytes), the text file's size, the LTTng"
  echo "  trace's size. Lost: sonde's summary, fired - lines for text, the channel's"
  echo "  discarded events for LTTng-UST (\`lttng list\`)."
  echo "- MB/s = bytes delivered / (wall - fixed wall); ns/record = (CPU - fixed CPU) / records"
  echo "  fired, CPU being user + sys of sonde and the target; fixed: the same configuration"
  echo "  on 0 records (median of $fixed_runs runs)."
  echo "- Loop s: b3_target's own firing loop (in discard mode the writers never wait)."
  echo "  Sonde's MB/s: its summary's, bytes over the whole session."
  echo "- LTTng-UST: CPU adds \`lttng stop\` (it waits until the consumer has written"
  echo "  everything) and the session and consumer daemons; wall is the target's alone"
  echo "  (\`lttng stop\` polls every 200 ms), so its last <= 16 MiB reach the disk after it."
  [ "$have_lttng" = 1 ] || echo "- LTTng-UST rows: not run (B3_LTTNG=0 or no session daemon)."
  if [[ " $modes " == *" discard "* && " $transports " == *" text "* ]]; then
    echo "- The text transport has no discard mode (sonde refuses \`--mode\` with it)."
  fi
  echo
  echo "| transport | mode | buffer MB | volume MB | records fired | records delivered | lost | bytes/record | loop s | wall s | fixed s | MB/s | sonde's MB/s | ns/record |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for config in "${configs[@]}"; do
    IFS='|' read -r key label mode buffer_column _ <<< "$config"
    read -r fixed_wall fixed_cpu _ <<< "${fixed[$key]}"
    for volume in $volumes; do
      [ -n "${result[$key,$volume]+set}" ] || continue
      fired=$((volume * 1000000 / record_bytes / threads * threads))
      value=${result[$key,$volume]}
      case "$value" in
        failed | skipped*)
          echo "| $label | $mode | $buffer_column | $volume | $fired | $value | | | | | | | | |"
          continue
          ;;
      esac
      read -r wall cpu delivered lost bytes sonde_mbps loop <<< "$value"
      read -r per_record mbps ns <<< "$(awk -v w="$wall" -v c="$cpu" -v fw="$fixed_wall" -v fc="$fixed_cpu" \
        -v d="$delivered" -v y="$bytes" -v f="$fired" 'BEGIN {
          printf "%s ", (d > 0 ? sprintf("%.1f", y / d) : "n/a")
          printf "%s ", (fw != "failed" && w > fw ? sprintf("%.1f", y / 1e6 / (w - fw)) : "n/a")
          printf "%s\n", (fc != "" && fw != "failed" ? sprintf("%.1f", (c - fc) * 1e9 / f) : "n/a") }')"
      rate[$key,$volume]=$mbps
      lost_of[$key,$volume]=$lost
      echo "| $label | $mode | $buffer_column | $volume | $fired | $delivered | $lost | $per_record | $loop | $wall | ${fixed_wall:-n/a} | $mbps | $sonde_mbps | $ns |"
    done
  done
} > "$section"

# The goals, from the rows above.
relay_buffer=16
[[ " $buffers " == *" 16 "* ]] || relay_buffer=$(echo "$buffers" | tr ' ' '\n' | sort -n | tail -1)
{
  echo
  echo "Goals:"
  echo
  echo "- relay >= 2 x LTTng-UST's MB/s with nothing lost (relay block, -s $relay_buffer, next to"
  echo "  LTTng-UST discard, 4 x 4 MiB = 16 MiB):"
  for volume in $volumes; do
    relay=${rate[relay,block,$relay_buffer,$volume]:-n/a}
    relay_lost=${lost_of[relay,block,$relay_buffer,$volume]:-n/a}
    lttng=${rate[lttng,discard,$volume]:-n/a}
    r=$(ratio "$relay" "$lttng")
    verdict=$(awk -v r="$r" -v l="$relay_lost" 'BEGIN {
      if (r == "n/a") print "n/a"; else if (r >= 2 && l == 0) print "met"; else print "**not met**" }')
    echo "  $volume MB: relay $relay MB/s ($relay_lost lost), LTTng-UST $lttng MB/s" \
      "(${lost_of[lttng,discard,$volume]:-n/a} lost): $r x, $verdict"
  done
  for other in netlink netlink1; do
    case $other in
    netlink) what="netlink's (4 KiB batches)" ;;
    netlink1) what="netlink's with one record per message (the seed's netlink)" ;;
    esac
    echo "- relay >= 10 x $what MB/s in discard mode (relay / $other; rows: volume MB,"
    echo "  columns: buffer MB):"
    echo
    echo "  | volume | $(echo "$buffers" | xargs | sed 's/ / | /g') |"
    echo "  |---:|$(for _ in $buffers; do printf -- '---:|'; done)"
    met=0 points=0
    for volume in $volumes; do
      cells=
      for buffer in $buffers; do
        r=$(ratio "${rate[relay,discard,$buffer,$volume]:-n/a}" "${rate[$other,discard,$buffer,$volume]:-n/a}")
        cells+=" $r |"
        [ "$r" = n/a ] && continue
        points=$((points + 1))
        awk -v r="$r" 'BEGIN {exit !(r >= 10)}' && met=$((met + 1))
      done
      echo "  | $volume |$cells"
    done
    echo
    echo "  Met at $met of $points points."
  done
  block_losses=$(grep -c 'in block mode' checks || true)
  if [ ! -s block_runs ]; then
    echo "- block mode never loses a record: n/a (no block-mode run recorded anything)."
  elif [ "$block_losses" = 0 ]; then
    echo "- block mode never loses a record: met in all $(wc -l < block_runs) block-mode runs."
  else
    echo "- block mode never loses a record: **not met** in $block_losses of $(wc -l < block_runs) runs, listed below."
  fi
  if [ -s checks ]; then
    echo
    echo "Problems found:"
    echo
    sed 's/^/- /' checks
  fi
  first_failure
} >> "$section"
write_section b3 "$section"
cat "$section"
