// How kernel probes hold the script's globals (runtime/bpf/BpfAbi.h), derived
// from the GlobalLayout alone so that the compiler, which bakes the offsets and
// sizes into the BPF code, and sonde, which sizes the maps and copies state
// between them and the segment, agree.
#pragma once

#include "runtime/values/GlobalLayout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sonde::bpf {

// Accumulator block of an aggregate entry: stap's StatBlock and 128 buckets.
inline constexpr uint32_t kStatBlockBytes = 64 + 8 * 128;

struct KernelStateShape {
  uint32_t strCap = 0;    // MAXSTRINGLEN
  uint32_t strColumn = 0; // a string key column or value: MAXSTRINGLEN rounded up to 8
  uint32_t stackFrames = 0; // MAXBACKTRACE, at most the context's room for a stack
  // Scalar long/string globals: offset after the control head, per layout
  // index (-1 for arrays and stats).
  std::vector<int64_t> scalarOffset;
  uint64_t scalarBytes = 0;
  uint32_t keyBytes = 8;         // sonde_arrays / sonde_aggregates key: the id, then columns
  uint32_t valueBytes = 8;       // their value (the larger of an array value and a block)
  uint32_t arrayEntries = 1;     // sonde_arrays max_entries
  uint32_t aggregateEntries = 1; // sonde_aggregates max_entries

  static KernelStateShape of(const values::GlobalLayout &layout);
  // Offset of key column `column` of global `index` (after the 8-byte id).
  uint32_t keyColumnOffset(const values::GlobalDesc &g, uint32_t column) const;
};

// Why kernel probes needing `bytes` of per-CPU scratch cannot load.
std::string scratchLimitError(uint64_t bytes);

} // namespace sonde::bpf
