#!/bin/sh
# compare-transports.sh: how fast does each transport carry a script's output,
# and does it lose any? Runs stream.probe on prodcons (1 producer, 1 consumer,
# ITEMS items: one ~100-byte record per item) over --transport=text, relay and
# netlink, each to a file, and prints records, bytes, seconds, MB/s and lost
# records for each. relay and netlink give sonde's own closing summary (bytes
# are the binary records carried, MB/s over the session); text's bytes are the
# formatted lines written and its MB/s the whole run's wall time, compile
# included, and its "lost" the records missing from the file.
#
# Run:    examples/throughput/compare-transports.sh [ITEMS [MODE]]
#         (ITEMS default 200000; MODE block (default) or discard, for relay
#         and netlink; text always blocks). SONDE (default build/sonde) and
#         TARGETS (default build/examples/targets) locate the binaries.
#
# Sample output (ITEMS 200000, block mode):
#   transport mode      records      bytes  seconds     MB/s   lost
#   text      block      200000   21968653    0.626     35.1      0
#   relay     block      200000   17797396    0.553     37.7      0
#   netlink   block      200000   17847184    0.679     30.0      0
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SONDE=${SONDE:-$root/build/sonde}
TARGETS=${TARGETS:-$root/build/examples/targets}
items=${1:-200000}
mode=${2:-block}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now_ns() { date +%s%N; }

printf '%-9s %-7s %9s %10s %8s %8s %6s\n' transport mode records bytes seconds MB/s lost
for transport in text relay netlink; do
  options="--transport=$transport"
  [ "$transport" = text ] || options="$options --mode=$mode"
  start=$(now_ns)
  # shellcheck disable=SC2086 # $options is two words on purpose
  "$SONDE" "$here/stream.probe" -c "$TARGETS/prodcons 1 1 $items" $options \
    -o "$work/out" >/dev/null 2>"$work/err" || {
    echo "sonde failed over $transport:" >&2
    cat "$work/err" >&2
    exit 1
  }
  end=$(now_ns)
  if [ "$transport" = text ]; then
    records=$(wc -l <"$work/out")
    bytes=$(wc -c <"$work/out")
    awk -v r="$records" -v b="$bytes" -v ns="$((end - start))" -v items="$items" 'BEGIN {
      s = ns / 1e9
      printf "%-9s %-7s %9d %10d %8.3f %8.1f %6d\n", "text", "block", r, b, s, b / 1e6 / s, items - r
    }'
  else
    # "sonde: relay transport (block mode): N records, B bytes, X MB/s, L lost"
    sed -n 's/^sonde: \([a-z]*\) transport (\([a-z]*\) mode): \([0-9]*\) records, \([0-9]*\) bytes, \([0-9.]*\) MB\/s, \([0-9]*\) lost.*/\1 \2 \3 \4 \5 \6/p' \
      "$work/err" |
      awk -v ns="$((end - start))" '{
        printf "%-9s %-7s %9d %10d %8.3f %8.1f %6d\n", $1, $2, $3, $4, ns / 1e9, $5, $6
      }'
  fi
done
