#!/usr/bin/env bash
# B6 (issue 21): stock <sys/sdt.h> markers next to Sonde's own, in one run.
#
# Part 1, the seed workload (B1's bench_target: T threads x N `single_trace(i)`)
# built two ways, with <sonde/sdt.h> (a 5-byte site) and with a stock
# DTRACE_PROBE1 (a 1-byte site; -DB1_STOCK). Rows: each build untraced (its
# baseline); under Sonde with an empty handler and with B1's seed script, both
# relay in block mode into a binary trace (-b -o DIR); the stock build under
# bpftrace USDT with an empty action. ns/event as in B1: (CPU - fixed - the
# build's baseline CPU for as many events) / events fired, CPU being user + sys
# of the whole run, fixed the same tool on 0 events, medians of B6_RUNS runs
# taken in turns over the rows. The stock site's path is what `sonde -L` says;
# where it is the trap, the stock Sonde rows fire N / B6_TRAP_SCALE events
# (bpftrace, a trap per event, always does). A sonde with the jump path also
# runs the stock rows with --stock-sites=trap (at N / B6_TRAP_SCALE).
#
# Part 2, pgbench -S on a throwaway PostgreSQL 15 cluster (pg_cluster.sh),
# B6_PG_SECONDS per run, 2 clients: untraced, under Sonde with a query-latency
# script on postgres's stock query__start/query__done markers (and with
# --stock-sites=trap, as in part 1), under bpftrace
# with the same in its language; transactions per second and the loss against
# the untraced runs, medians of B6_PG_RUNS rounds. Sonde starts the server
# (`sonde -c 'runuser -u postgres -- postgres ...'`, the backends being its
# forked children); whether `sonde -x` attaches to the postmaster is tried once
# and its answer reported. bpftrace attaches to the binary before the server
# starts.
#
# Environment: B6_N (50,000,000 events per thread), B6_THREADS (2), B6_RUNS (3),
# B6_TRAP_SCALE (500), B6_PG_SECONDS (10), B6_PG_RUNS (5), B6_PG_SCALE (2),
# B6_PG=0 to leave out part 2. Run as root (bpftrace, the postgres user).
# Writes the b6 section of bench/reports/markers.md ($BENCH_REPORT_DIR when set).
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
source "$here/pg_cluster.sh"
trap 'pg_cleanup; lttng_stop_daemon' EXIT
trap 'exit 130' INT TERM HUP
n=${B6_N:-50000000}
threads=${B6_THREADS:-2}
runs=${B6_RUNS:-3}
trap_scale=${B6_TRAP_SCALE:-500}
pg_seconds=${B6_PG_SECONDS:-10}
pg_runs=${B6_PG_RUNS:-5}
pg_scale=${B6_PG_SCALE:-2}

load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
cd "$tmp"
build_target bench_sonde "$here/bench_target.c" -pthread
build_target bench_stock "$here/bench_target.c" -DB1_STOCK -pthread
stock_path=$("$sonde" -L 'process("./bench_stock").mark("single_trace")' | sed -n 's/.*\/\* \([^:]*\).*/\1/p' | sed 's/ at 0x[0-9a-f]*$//')
n_stock=$n
case $stock_path in trap*) n_stock=$((n / trap_scale)) ;; esac
n_bpf=$((n / trap_scale))

empty='{ }'
seed='{ printf("%d : %d\n", gettimeofday_ns(), $arg1) }'
sonde_relay() { # BUILD BODY T N [OPTIONS...]
  local build=$1 body=$2 t=$3 n=$4
  shift 4
  rm -rf trace
  cpu_seconds "$sonde" "$@" --transport=relay -b -o "$tmp/trace" \
    -e "probe process(\"./$build\").mark(\"single_trace\") $body" -c "./$build $t $n" || return 1
  local summary
  summary=$(transport_summary last.err)
  [ -z "$summary" ] || [ "${summary##* }" = 0 ] || echo "${summary##* } lost" >> note
  rm -rf trace
}
tool_base_sonde() { cpu_seconds ./bench_sonde "$1" "$2"; }
tool_base_stock() { cpu_seconds ./bench_stock "$1" "$2"; }
tool_sonde_empty() { sonde_relay bench_sonde "$empty" "$1" "$2"; }
tool_stock_empty() { sonde_relay bench_stock "$empty" "$1" "$2"; }
tool_sonde_seed() { sonde_relay bench_sonde "$seed" "$1" "$2"; }
tool_stock_seed() { sonde_relay bench_stock "$seed" "$1" "$2"; }
tool_stock_trap_empty() { sonde_relay bench_stock "$empty" "$1" "$2" --stock-sites=trap; }
tool_stock_trap_seed() { sonde_relay bench_stock "$seed" "$1" "$2" --stock-sites=trap; }
tool_bpftrace_empty() {
  cpu_seconds bpftrace -e 'usdt:./bench_stock:bench:single_trace { }' -c "./bench_stock $1 $2"
}

# tool|label|events per thread|the baseline it is measured over
rows=("tool_base_sonde|<sonde/sdt.h> build, not attached|$n|"
  "tool_base_stock|<sys/sdt.h> build, not attached|$n|"
  "tool_sonde_empty|Sonde, <sonde/sdt.h> marker, empty handler, relay -b|$n|tool_base_sonde"
  "tool_stock_empty|Sonde, <sys/sdt.h> marker, empty handler, relay -b|$n_stock|tool_base_stock"
  "tool_sonde_seed|Sonde, <sonde/sdt.h> marker, B1's seed printf, relay -b|$n|tool_base_sonde"
  "tool_stock_seed|Sonde, <sys/sdt.h> marker, B1's seed printf, relay -b|$n_stock|tool_base_stock")
# A sonde that has the jump path also takes the trap on request: both, side by side.
trap_rows=0
if [ "$stock_path" != trap ] &&
  "$sonde" --stock-sites=trap -L 'process("./bench_stock").mark("single_trace")' > /dev/null 2>&1; then
  trap_rows=1
  rows+=("tool_stock_trap_empty|Sonde, <sys/sdt.h> marker (--stock-sites=trap), empty handler, relay -b|$((n / trap_scale))|tool_base_stock"
    "tool_stock_trap_seed|Sonde, <sys/sdt.h> marker (--stock-sites=trap), B1's seed printf, relay -b|$((n / trap_scale))|tool_base_stock")
fi
bpftrace -e 'BEGIN { exit(); }' > /dev/null 2>&1 &&
  rows+=("tool_bpftrace_empty|bpftrace USDT, <sys/sdt.h> marker, empty action|$n_bpf|tool_base_stock")

run_once() { # TOOL T N: one run's CPU seconds; the first failure is kept
  if ! "$@" 2> run.err; then
    [ -s first.err ] || { echo "$*:"; head -5 run.err; } > first.err
    return 1
  fi
}
declare -A fixed cpus failed
for entry in "${rows[@]}"; do
  IFS='|' read -r tool _ _ _ <<< "$entry"
  values=()
  for ((r = 0; r < runs; r++)); do
    v=$(run_once "$tool" 1 0) || { failed[$tool]=1; break; }
    values+=("$v")
  done
  [ -n "${failed[$tool]:-}" ] || fixed[$tool]=$(printf '%s\n' "${values[@]}" | median)
done
rm -f note
for ((r = 0; r < runs; r++)); do
  for entry in "${rows[@]}"; do
    IFS='|' read -r tool _ per_thread _ <<< "$entry"
    [ -z "${failed[$tool]:-}" ] || continue
    rm -f note
    v=$(run_once "$tool" "$threads" "$per_thread") || { failed[$tool]=1; continue; }
    cpus[$tool]="${cpus[$tool]:-} $v"
    [ ! -s note ] || cat note >> "notes.$tool"
  done
done

declare -A median_cpu ns
section=$tmp/b6.md
{
  echo "## B6: stock sys/sdt.h markers next to Sonde's own and bpftrace (issue 21)"
  echo
  section_header
  echo "\`bench/markers/b6.sh\`. The stock marker's path at this commit, as \`sonde -L\` gives it:"
  echo "**$stock_path**. Load average when the run started: $load_at_start (1, 5, 15 min; other"
  echo "work on the machine shows there)."
  echo
  echo "B1's seed workload at $threads threads, built with <sonde/sdt.h> and with a stock"
  echo "\`DTRACE_PROBE1\`. CPU s: user + sys of the whole run (tool and target), median of $runs"
  echo "runs taken in turns over the rows; fixed s: the same tool on 0 events. ns/event ="
  echo "(CPU - fixed - the build's baseline CPU for as many events) / events fired. Sonde"
  echo "rows: relay transport, block mode, binary trace (\`-b -o DIR\`); the seed script is"
  echo "B1's \`printf(\"%d : %d\\n\", gettimeofday_ns(), \$arg1)\`. Rows that trap fire"
  echo "1/$trap_scale of the events."
  echo
  echo "| row | events fired | CPU s | fixed s | ns/event over baseline |"
  echo "|---|---:|---:|---:|---:|"
  for entry in "${rows[@]}"; do
    IFS='|' read -r tool label per_thread base <<< "$entry"
    fired=$((threads * per_thread))
    if [ -n "${failed[$tool]:-}" ]; then
      median_cpu[$tool]=failed ns[$tool]=n/a
      echo "| $label | $fired | failed | ${fixed[$tool]:-failed} | n/a |"
      continue
    fi
    median_cpu[$tool]=$(printf '%s\n' ${cpus[$tool]} | median)
    if [ -z "$base" ]; then
      ns[$tool]=0
    else
      ns[$tool]=$(awk -v c="${median_cpu[$tool]}" -v f="${fixed[$tool]}" -v b="${median_cpu[$base]}" \
        -v be="$((threads * n))" -v e="$fired" \
        'BEGIN { if (b == "failed" || e == 0) print "n/a"; else printf "%.1f", ((c - f) - b / be * e) * 1e9 / e }')
    fi
    note=$(sort -u "notes.$tool" 2> /dev/null | paste -sd';' || true)
    echo "| $label | $fired | ${median_cpu[$tool]} | ${fixed[$tool]} | ${ns[$tool]}${note:+ ($note)} |"
  done
  echo
  echo "Ratios (ns/event): stock / sonde marker, empty handler = $(ratio "${ns[tool_stock_empty]:-n/a}" "${ns[tool_sonde_empty]:-n/a}"),"
  echo "seed script = $(ratio "${ns[tool_stock_seed]:-n/a}" "${ns[tool_sonde_seed]:-n/a}") (goal <= 1.5);"
  echo "bpftrace empty / Sonde stock empty = $(ratio "${ns[tool_bpftrace_empty]:-n/a}" "${ns[tool_stock_empty]:-n/a}" 1) (goal >= 100)."
  first_failure
} > "$section"

[ "${B6_PG:-1}" = 1 ] || { write_section b6 "$section"; cat "$section"; exit 0; }

# Part 2: pgbench.
postgres=$pg_bin/postgres
pg_sonde_script="global start, latency
probe process(\"$postgres\").mark(\"query__start\") { start[tid()] = gettimeofday_ns() }
probe process(\"$postgres\").mark(\"query__done\") {
  if (tid() in start) { latency <<< gettimeofday_ns() - start[tid()]; delete start[tid()] }
}
probe end { printf(\"queries=%d\\n\", @count(latency)); if (@count(latency)) print(@hist_log(latency)) }"
pg_bpftrace_script="usdt:$postgres:query__start { @start[tid] = nsecs; }
usdt:$postgres:query__done /@start[tid]/ { @latency = hist(nsecs - @start[tid]); delete(@start[tid]); @queries = count(); }"

# pg_run MODE: one pgbench run against a server started for it; leaves
# "TPS TRANSACTIONS QUERIES_SEEN" in pg.result (QUERIES_SEEN n/a untraced).
pg_run() {
  local mode=$1 server tracer='' seen=n/a
  rm -f pg.result tool.out tool.err
  case $mode in
    untraced)
      pg_run_server >> "$pg_dir/log" 2>&1 &
      server=$!
      ;;
    sonde | sonde_trap)
      local options=()
      [ "$mode" = sonde ] || options=(--stock-sites=trap)
      (cd / && exec "$sonde" "${options[@]}" -e "$pg_sonde_script" -c "$(pg_server_command)" \
        > "$tmp/tool.out" 2> "$tmp/tool.err") &
      server=$!
      ;;
    bpftrace)
      bpftrace -e "$pg_bpftrace_script" > tool.out 2> tool.err &
      tracer=$!
      for _ in $(seq 200); do grep -q '^Attaching' tool.out && break; sleep 0.1; done
      pg_run_server >> "$pg_dir/log" 2>&1 &
      server=$!
      ;;
  esac
  if ! pg_wait_ready; then
    kill "$server" ${tracer:+"$tracer"} 2> /dev/null || true
    return 1
  fi
  if [ "$mode" = untraced ] && [ ! -e attach.result ]; then
    # Whether `sonde -x` can attach to the postmaster (which would follow
    # the backends it forks): its first line of output, once.
    timeout 60 "$sonde" -x "$(head -1 "$pg_dir/data/postmaster.pid")" -T 1 \
      -e "probe process(\"$postgres\").mark(\"query__start\") { }" > attach.out 2>&1 &&
      echo "attached and detached" > attach.result || head -1 attach.out > attach.result
  fi
  pg_bench -S -T "$pg_seconds" -c 2 > pgbench.out 2>&1 || true
  pg_stop
  wait "$server" || true
  if [ -n "$tracer" ]; then
    kill -INT "$tracer"
    wait "$tracer" || true
  fi
  case $mode in
    sonde | sonde_trap) seen=$(sed -n 's/^queries=//p' tool.out) ;;
    bpftrace) seen=$(sed -n 's/^@queries: //p' tool.out) ;;
  esac
  local tps transactions
  tps=$(sed -n 's/^tps = \([0-9]*\)\.[0-9]* .*/\1/p' pgbench.out)
  transactions=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' pgbench.out)
  if [ -z "$tps" ] || [ -z "${seen:-}" ]; then
    { echo "pgbench, $mode:"; tail -3 pgbench.out; tail -3 tool.err 2> /dev/null; } > pg.first.err
    return 1
  fi
  echo "$tps $transactions $seen" > pg.result
}

pg_setup "$pg_scale"
modes=(untraced sonde)
[ "$trap_rows" = 0 ] || modes+=(sonde_trap)
modes+=(bpftrace)
declare -A mode_label=([untraced]=untraced [sonde]="Sonde ($stock_path)"
  [sonde_trap]="Sonde, --stock-sites=trap" [bpftrace]="bpftrace USDT")
declare -A pg_tps pg_last
for ((r = 0; r < pg_runs; r++)); do
  for mode in "${modes[@]}"; do
    if pg_run "$mode"; then
      read -r tps transactions seen < pg.result
      pg_tps[$mode]="${pg_tps[$mode]:-} $tps"
      pg_last[$mode]="$transactions transactions, $seen queries seen"
      [ "$mode" != sonde ] || cp tool.out pg.sonde.out
    else
      [ -s pg.first.err ] && [ ! -s first.pg.err ] && cp pg.first.err first.pg.err
    fi
  done
done

{
  echo
  echo "pgbench -S, scale $pg_scale, 2 clients, $pg_seconds s a run, on a throwaway cluster"
  echo "(\`pg_cluster.sh\`; the client runs on the same 2 cores). Each run starts the server"
  echo "afresh: untraced; under Sonde (\`sonde -c 'runuser -u postgres -- postgres ...'\`, the"
  also_trap=
  [ "$trap_rows" = 0 ] || also_trap=" and with \`--stock-sites=trap\`"
  echo "query-latency script below, text transport) on the stock markers' path ($stock_path)$also_trap;"
  echo "under bpftrace (attached to the binary before the server starts). tps: pgbench's \"without initial connection time\", median"
  echo "of $pg_runs rounds (each round runs the rows in turn); loss: against the untraced median."
  echo
  echo "\`sonde -x\` on the idle postmaster, tried once before the first untraced run:"
  echo "\`$(cat attach.result 2> /dev/null || echo 'not tried')\`."
  echo
  echo "| row | tps (median) | runs | loss | last run: transactions, queries the tool saw |"
  echo "|---|---:|---|---:|---|"
  base=
  for mode in "${modes[@]}"; do
    tps_list=${pg_tps[$mode]:-}
    if [ -z "$tps_list" ]; then
      echo "| ${mode_label[$mode]} | failed | | | |"
      continue
    fi
    m=$(printf '%s\n' $tps_list | median)
    [ -n "$base" ] || base=$m
    loss=$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.1f %%", 100 * (1 - m / b) }')
    echo "| ${mode_label[$mode]} | $m | $(echo $tps_list | sed 's/ /, /g') | $loss | ${pg_last[$mode]} |"
    [ "$mode" != sonde ] || sonde_loss=$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.1f", 100 * (1 - m / b) }')
  done
  echo
  echo "Goal (issue 21): Sonde's loss <= 5 %: $(awk -v l="${sonde_loss:-n/a}" \
    'BEGIN { if (l == "n/a") print "n/a"; else print (l <= 5 ? "met" : "**not met**") " (" l " %)" }')."
  echo
  echo "Sonde's script:"
  echo
  echo '```'
  echo "$pg_sonde_script"
  echo '```'
  echo
  echo "bpftrace's:"
  echo
  echo '```'
  echo "$pg_bpftrace_script"
  echo '```'
  if [ -s pg.sonde.out ]; then
    echo
    echo "Query latency Sonde measured in the last run (ns):"
    echo
    echo '```'
    cat pg.sonde.out
    echo '```'
  fi
  if [ -s first.pg.err ]; then
    echo
    echo "First failure:"
    echo
    echo '```'
    cat first.pg.err
    echo '```'
  fi
} >> "$section"
write_section b6 "$section"
cat "$section"
