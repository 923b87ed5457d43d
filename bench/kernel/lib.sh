# Sourced by bench/kernel/b4.sh after bench/common.sh: this folder, the report,
# then the tracer-benchmark helpers (../lib.sh).
here=$top/bench/kernel
report=$reports/kernel.md
report_title='Kernel tracepoint benchmarks (B4)'
source "$top/bench/lib.sh"
