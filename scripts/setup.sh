#!/usr/bin/env bash
# Installs every Debian package Sonde, its tests and its benchmarks need.
# A no-op (no apt-get call at all) when everything is already installed.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config git time
  # compiler: LLVM 19 as one shared library, clang-19 for libFuzzer/sanitizers
  llvm-19-dev clang-19 libclang-rt-19-dev lld-19
  # parser generator and runtime
  antlr4 libantlr4-runtime-dev
  # ELF notes, DWARF, unwinding, Lua consumer scripts, BPF loading
  libelf-dev libdw-dev libunwind-dev liblua5.4-dev libbpf-dev zlib1g-dev
  # tests
  googletest libgtest-dev libgmock-dev
  # a binary with SDT markers that marker resolution tests read (function__entry, gc__start)
  python3.11-minimal
  # comparisons in tests and benchmarks
  lttng-tools liblttng-ust-dev babeltrace2 bpftrace systemtap-sdt-dev
  # random C programs for the stock-marker differential test (tests/differential)
  csmith libcsmith-dev
  # a real program with 71 stock markers: the stock-sites report and B6's pgbench
  # rows (bench/markers/stock-sites.sh, b6.sh)
  postgresql-15 postgresql-client-15
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
