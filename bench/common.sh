# Sourced by every bench/*/run.sh: paths, a scratch directory and helpers.
#   top      the repository; sonde  the binary under test ($SONDE overrides)
#   tmp      a scratch directory removed on exit
#   reports  where reports are written: bench/reports, or $BENCH_REPORT_DIR
#            (trial runs with small sizes, so they leave the real reports alone)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sonde=$(readlink -f "${SONDE:-$top/build/sonde}") # absolute: scripts cd around
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
reports=$(mkdir -p "${BENCH_REPORT_DIR:-$top/bench/reports}" && cd "${BENCH_REPORT_DIR:-$top/bench/reports}" && pwd)

# The median of the numbers on standard input, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
