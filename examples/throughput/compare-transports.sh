#!/bin/sh
# compare-transports.sh: how much does each transport carry when the target
# produces records faster than it can take them, at what CPU cost, and what is
# lost? b3_target (bench/transports/b3_target.c, built into the demo targets)
# fires its `record` marker as fast as it can; firehose.probe makes a ~100-byte
# record of each hit. Each transport gets the same volume: relay and netlink
# write a binary trace (-b -o DIR, as bench/transports/b3.sh does), text a
# file of lines (-o FILE), all to disk (the page cache).
#
# Per transport, one row:
#   records    records fired (all writer threads)
#   delivered  records that reached the output (relay/netlink: sonde's closing
#              summary; text: the file's lines)
#   lost       records counted as lost (discard mode; 0 in block mode)
#   MB         bytes delivered (relay/netlink: binary records; text: the lines)
#   seconds    wall time of the run, less the same run on 0 records (compile,
#              start-up, attach, buffers: measured first, the "fixed" cost);
#              n/a when under 10 ms (too small a volume to time: raise -n)
#   records/s  delivered / seconds;  MB/s  MB / seconds
#   CPU ns/rec user + sys CPU of sonde and the target (getrusage of waited-for
#              children), less the fixed run's, per record fired
#
# Run:    examples/throughput/compare-transports.sh [-n RECORDS] [-s MB]
#             [-m block|discard] [-t THREADS] [-T "relay netlink text"]
#   -n  records fired per transport, all threads together (default 5000000:
#       about 500 MB, a few seconds per transport on a 2-core VM)
#   -s  buffer size in MB (sonde -s; default: each transport's own)
#   -m  mode for relay and netlink (default block; text always blocks)
#   -t  writer threads in the target (default 1)
#   -T  the transports to run, in order (default "text relay netlink")
#   SONDE (default build/sonde) and TARGETS (default build/examples/targets)
#   locate the binaries; TMPDIR where the outputs go (deleted after each run).
#
# Sample output (-n 2000000, block mode, 2-core VM; see README.md for more):
#   transport mode    buffer    records  delivered     lost      MB  seconds  records/s     MB/s CPU ns/rec
#   text      block   default   2000000    2000000        0   188.9    3.412     586166     55.4     2338.6
#   relay     block   default   2000000    2000000        0   200.2    0.343    5830904    583.6      215.2
#   netlink   block   default   2000000    2000000        0   200.2    0.441    4535147    454.0      298.3
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SONDE=${SONDE:-$root/build/sonde}
TARGETS=${TARGETS:-$root/build/examples/targets}
records=5000000
buffer=
mode=block
threads=1
transports="text relay netlink"

usage() {
  echo "usage: $0 [-n RECORDS] [-s MB] [-m block|discard] [-t THREADS] [-T TRANSPORTS]" >&2
  exit 2
}
while getopts n:s:m:t:T: opt; do
  case $opt in
  n) records=$OPTARG ;;
  s) buffer=$OPTARG ;;
  m) mode=$OPTARG ;;
  t) threads=$OPTARG ;;
  T) transports=$OPTARG ;;
  *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
case $mode in block | discard) ;; *) usage ;; esac
for n in "$records" "$threads" ${buffer:+"$buffer"}; do
  case $n in '' | *[!0-9]*) usage ;; esac
done
[ "$threads" -ge 1 ] || usage
for transport in $transports; do
  case $transport in text | relay | netlink) ;; *) usage ;; esac
done
per_thread=$(((records + threads - 1) / threads))
fired=$((per_thread * threads))

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run TRANSPORT N: runs sonde over TRANSPORT with the target firing N records
# per thread and prints "WALL CPU", wall seconds and the user + sys seconds of
# sonde and everything it waited for (`times`' second line: the children's).
# Its stderr is left in $work/err, its output in $work/out.
run() {
  rm -rf "$work/out"
  set -- "$1" "$2" "--transport=$1"
  [ "$1" = text ] || set -- "$@" "--mode=$mode" -b
  [ -z "$buffer" ] || set -- "$@" -s "$buffer"
  (
    start=$(date +%s%N)
    cd "$TARGETS" # -c's program is found relative to here, as in the script
    "$SONDE" "$here/firehose.probe" -c "./b3_target $threads $2" -o "$work/out" "$@" \
      >/dev/null 2>"$work/err" || exit 1
    end=$(date +%s%N)
    echo "$start $end"
    times
  ) >"$work/usage" || {
    echo "sonde failed over $1:" >&2
    cat "$work/err" >&2
    exit 1
  }
  # Line 1: start and end (ns); line 3: the children's "user sys", e.g.
  # "0m1.250000s 0m0.010000s".
  awk 'NR == 1 { wall = ($2 - $1) / 1e9 }
       NR == 3 { split($1, u, /[ms]/); split($2, s, /[ms]/)
                 printf "%.6f %.6f\n", wall, u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$work/usage"
}

printf '%-9s %-7s %-7s %10s %10s %8s %7s %8s %10s %8s %10s\n' \
  transport mode buffer records delivered lost MB seconds records/s MB/s 'CPU ns/rec'
for transport in $transports; do
  fixed=$(run "$transport" 0)
  used=$(run "$transport" "$per_thread")
  if [ "$transport" = text ]; then
    delivered=$(wc -l <"$work/out")
    bytes=$(wc -c <"$work/out")
    lost=0
    row_mode=block
  else
    # "sonde: relay transport (block mode): N records, B bytes, X MB/s, L lost"
    summary=$(sed -n 's/^sonde: [a-z]* transport ([a-z]* mode): \([0-9]*\) records, \([0-9]*\) bytes, [0-9.]* MB\/s, \([0-9]*\) lost.*/\1 \2 \3/p' "$work/err")
    [ -n "$summary" ] || {
      echo "no transport summary from sonde over $transport:" >&2
      cat "$work/err" >&2
      exit 1
    }
    # shellcheck disable=SC2086 # three numbers, split on purpose
    set -- $summary
    delivered=$1 bytes=$2 lost=$3
    row_mode=$mode
  fi
  if [ $((delivered + lost)) -ne "$fired" ]; then
    echo "$transport: $delivered delivered + $lost lost != $fired fired" >&2
    exit 1
  fi
  echo "$transport $row_mode ${buffer:-default} $fired $delivered $lost $bytes $fixed $used" |
    awk '{
      wall = $10 - $8; cpu = $11 - $9; if (cpu < 0) cpu = 0
      # Under 10 ms above the fixed run, the difference is noise: no rates.
      if (wall < 0.01) { secs = "n/a"; rate = "n/a"; mbps = "n/a" }
      else { secs = sprintf("%.3f", wall); rate = sprintf("%.0f", $5 / wall)
             mbps = sprintf("%.1f", $7 / 1e6 / wall) }
      printf "%-9s %-7s %-7s %10d %10d %8d %7.1f %8s %10s %8s %10.1f\n",
        $1, $2, $3, $4, $5, $6, $7 / 1e6, secs, rate, mbps, $4 ? cpu * 1e9 / $4 : 0
    }'
done
