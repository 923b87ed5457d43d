// Scalar stats globals: one accumulator per CPU, merged on read.
//
// Each slot has a one-word lock holding its owner's pid. `s <<< v` claims the slot
// of the current CPU with one compare-exchange and updates it with plain stores:
// measured here at 3.7 ns, against 9.4 ns for an atomic add / CAS per field, and the
// only way to run stap's multi-field Welford update exactly. A busy slot (a thread
// preempted inside it on the same CPU) sends the writer to the next slot, so writers
// do not wait on each other.
//
// A slot is taken over only when its owner process is gone (a killed target):
// taking it from a live but preempted owner would let that owner's stale write-back
// undo other updates. If every slot stays busy for kWriterPatienceNs, the writer
// updates the overflow block with atomic operations instead (count, sum, min, max
// and buckets stay exact; that sample then joins @variance through its mean only).
// Readers wait up to kReaderPatienceNs for a live owner, then read the slot as it is.
//
// Only the slot values and lock words are read from the segment; slot count,
// stride and shape come from the trusted header. A lock word naming no possible
// process is noted as corruption (and the slot taken over).
#pragma once

#include "runtime/values/SegmentFormat.h"
#include "runtime/values/SegmentShadow.h"

namespace sonde::values {

inline constexpr int64_t kWriterPatienceNs = 1'000'000;
inline constexpr int64_t kReaderPatienceNs = 50'000'000;

// Slot i (i == slotCount is the overflow block) of a global whose static header
// (slot count and stride, shape) is `shape`: in sonde its own copy (SegmentShadow.h).
inline StatBlock *statsSlot(StatsHeader *h, const StatsHeader &shape, uint32_t i) {
  return reinterpret_cast<StatBlock *>(reinterpret_cast<char *>(h) + sizeof(StatsHeader) +
                                       uint64_t{i} * shape.slotStride);
}
inline StatBlock *statsSlot(StatsHeader *h, uint32_t i) {
  return statsSlot(h, *trustedStats(h), i);
}

// Prepares the blocks of a zeroed stats global.
void scalarStatsInit(StatsHeader *h);

// s <<< v.
void scalarStatsAdd(StatsHeader *h, int64_t v);

// Merges every slot (each read under its slot lock) and the overflow block.
void scalarStatsSummary(StatsHeader *h, bool withBuckets, sonde_stat_summary &out);

// delete s.
void scalarStatsClear(StatsHeader *h);

// Checks every slot (lock word, values); false after noting the first problem.
bool scalarStatsCheck(StatsHeader *h);

} // namespace sonde::values
