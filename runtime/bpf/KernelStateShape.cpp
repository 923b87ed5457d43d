#include "runtime/bpf/KernelStateShape.h"

#include "runtime/bpf/BpfAbi.h"

#include <algorithm>

namespace sonde::bpf {

KernelStateShape KernelStateShape::of(const values::GlobalLayout &layout) {
  KernelStateShape s;
  s.strCap = layout.limits().max_string_len;
  s.stackFrames = std::min<uint32_t>(layout.limits().max_backtrace, SONDE_BPF_MAX_BACKTRACE);
  s.strColumn = (s.strCap + 7) & ~7u;
  uint64_t arrays = 0, aggregates = 0;
  for (const values::GlobalDesc &g : layout.globals()) {
    bool stats = g.value == values::ValueKind::Stats;
    if (g.keyCount == 0 && !stats) {
      s.scalarOffset.push_back(static_cast<int64_t>(s.scalarBytes));
      s.scalarBytes += g.value == values::ValueKind::String ? s.strColumn : 8;
      continue;
    }
    s.scalarOffset.push_back(-1);
    s.keyBytes = std::max(s.keyBytes, s.keyColumnOffset(g, g.keyCount));
    uint32_t entries = g.keyCount == 0 ? 1
                       : g.maxEntries  ? g.maxEntries
                                       : layout.limits().max_map_entries;
    if (stats) {
      s.valueBytes = std::max(s.valueBytes, kStatBlockBytes);
      aggregates += entries;
    } else {
      if (g.value == values::ValueKind::String)
        s.valueBytes = std::max(s.valueBytes, s.strColumn);
      arrays += entries;
    }
  }
  s.arrayEntries = static_cast<uint32_t>(std::clamp<uint64_t>(arrays, 1, UINT32_MAX));
  s.aggregateEntries = static_cast<uint32_t>(std::clamp<uint64_t>(aggregates, 1, UINT32_MAX));
  return s;
}

uint32_t KernelStateShape::keyColumnOffset(const values::GlobalDesc &g, uint32_t column) const {
  uint32_t off = 8;
  for (uint32_t c = 0; c < column && c < g.keyCount; ++c)
    off += g.keys[c] == values::KeyKind::String ? strColumn : 8;
  return off;
}

std::string scratchLimitError(uint64_t bytes) {
  return "kernel probes need " + std::to_string(bytes) +
         " bytes of per-CPU scratch for their strings and records, and BPF allows " +
         std::to_string(SONDE_BPF_MAX_SCRATCH_BYTES) +
         ": lower MAXSTRINGLEN (-DMAXSTRINGLEN=N) or use fewer string temporaries";
}

} // namespace sonde::bpf
