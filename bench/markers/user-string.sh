#!/usr/bin/env bash
# user_string at a marker (issue 21: "at most 30 ns in a handler"): B2's loop
# with a <sonde/sdt.h> marker passing a 32-byte string, the handler empty, or
# reading the string with user_string(), in place (the agent's fault-handled
# copy) and, in the same run, with SIGSEGV/SIGBUS blocked in the loop's thread,
# where every read goes through process_vm_readv as all reads did before.
# ns/iteration is the loop's process CPU time measured inside the target,
# median of US_RUNS (3) runs. Environment: US_N iterations (10,000,000; the
# process_vm_readv row runs US_N / 100). Writes the user-string section of
# bench/reports/markers.md ($BENCH_REPORT_DIR/markers.md when set).
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
n=${US_N:-10000000}
n_slow=$((n / 100))
runs=${US_RUNS:-3}

cd "$tmp"
build_target user_string_loop "$here/user_string_loop.c"

median_run() { median_result ns_per_iteration "$@"; }
traced() { # BODY ITERATIONS [blocked]
  "$sonde" -e "probe process(\"./user_string_loop\").mark(\"named\") { $1 }" \
    -c "./user_string_loop $2 $tmp/result ${3:-}"
}

rows=()
add_row() { rows+=("$1|$2|$3"); } # label|iterations|ns

base=$(median_run ./user_string_loop "$n" result)
add_row "marker, not attached (baseline)" "$n" "$base"
empty=$(median_run traced "" "$n")
add_row "empty handler" "$n" "$empty"
in_place=$(median_run traced 'if (user_string($arg2) == "") exit()' "$n")
add_row "user_string(\$arg2), in place" "$n" "$in_place"
add_row "user_long(\$arg2), in place" "$n" \
  "$(median_run traced 'if (user_long($arg2) == 1) exit()' "$n")"
empty_blocked=$(median_run traced "" "$n_slow" blocked)
add_row "empty handler, SIGSEGV/SIGBUS blocked" "$n_slow" "$empty_blocked"
syscall_path=$(median_run traced 'if (user_string($arg2) == "") exit()' "$n_slow" blocked)
add_row "user_string(\$arg2), SIGSEGV/SIGBUS blocked: process_vm_readv" "$n_slow" "$syscall_path"

section=$tmp/user-string.md
{
  echo "## user_string at a marker (issue 21)"
  echo
  section_header
  echo "B2's loop with a <sonde/sdt.h> marker (5-byte site) passing a 32-byte string;"
  echo "the handler compares what it reads with \"\" (so the read is used). ns/iteration"
  echo "is the loop's process CPU time measured inside the target, median of $runs runs;"
  echo "\"over empty handler\" is the read's own cost (goal: user_string <= 30 ns)."
  echo "The blocked rows run the loop with SIGSEGV and SIGBUS blocked, where the agent"
  echo "reads with process_vm_readv (\`runtime/agent/README.md\`), as every read did before."
  echo
  echo "| handler | iterations | ns/iteration | over baseline, ns | over empty handler, ns |"
  echo "|---|---:|---:|---:|---:|"
  for row in "${rows[@]}"; do
    IFS='|' read -r label iterations ns <<< "$row"
    over=$(awk -v a="$ns" -v b="$base" 'BEGIN { if (a == "failed") print "n/a"; else printf "%.2f", a - b }')
    overEmpty=$(awk -v a="$ns" -v b="$empty" -v l="$label" 'BEGIN {
      if (a == "failed" || b == "failed" || l !~ /user_/) print ""; else printf "%.2f", a - b }')
    echo "| $label | $iterations | $ns | $over | $overEmpty |"
  done
  echo
  awk -v a="$in_place" -v e="$empty" -v s="$syscall_path" -v b="$empty_blocked" 'BEGIN {
    if (a == "failed" || e == "failed") { print "Goal: n/a (a row failed)"; exit }
    printf "Goal, user_string of a 32-byte string <= 30 ns in a handler: %.1f ns, %s", a - e,
      a - e <= 30 ? "met" : "**not met**"
    if (s != "failed" && b != "failed") printf " (%.0f times less than process_vm_readv)", (s - b) / (a - e)
    print "." }'
  first_failure
} > "$section"
write_section user-string "$section"
cat "$section"
