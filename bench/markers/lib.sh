# Sourced by bench/markers/b1.sh and b2.sh after bench/common.sh: this folder,
# the shared report, then the tracer-benchmark helpers (../lib.sh).
here=$top/bench/markers
report=$reports/markers.md
report_title='Marker benchmarks (B1, B2)'
source "$top/bench/lib.sh"
