#include "runtime/values/ScalarStats.h"

#include "runtime/values/CurrentCpu.h"
#include "runtime/values/ProcessIdentity.h"
#include "runtime/values/StapArith.h"
#include "runtime/values/StatAccumulator.h"

#include <climits>
#include <ctime>
#include <sched.h>
#include <string>

namespace sonde::values {

namespace {

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

bool tryLockSlot(StatBlock *b, uint32_t me) {
  uint32_t expected = 0;
  return b->slotLock.load(std::memory_order_relaxed) == 0 &&
         b->slotLock.compare_exchange_strong(expected, me, std::memory_order_acquire,
                                             std::memory_order_relaxed);
}

void unlockSlot(StatBlock *b) { b->slotLock.store(0, std::memory_order_release); }

// Claims a slot whose owner process died in the middle of an update (or whose
// lock word names no process at all: damage, noted).
bool takeOverFromDead(StatBlock *b, uint32_t me) {
  uint32_t owner = b->slotLock.load(std::memory_order_relaxed);
  if (owner == 0 || owner == me || !processIsGone(owner))
    return false;
  if (!plausiblePid(owner))
    noteSegmentCorruption(b, "a per-CPU slot's lock word %u names no process", owner);
  return b->slotLock.compare_exchange_strong(owner, me, std::memory_order_acquire,
                                             std::memory_order_relaxed);
}

uint32_t wrapSlot(uint32_t s, uint32_t n) { return s < n ? s : s - n; }

// Every slot was busy on the first pass: let the holders run, retry, take over the
// slots of dead owners; nullptr once the patience is spent.
StatBlock *lockAnySlotSlow(StatsHeader *h, const StatsHeader &shape, uint32_t home, uint32_t me) {
  int64_t deadline = monotonicNs() + kWriterPatienceNs;
  for (;;) {
    sched_yield();
    for (uint32_t i = 0; i < shape.slotCount; ++i)
      if (StatBlock *b = statsSlot(h, shape, wrapSlot(home + i, shape.slotCount));
          tryLockSlot(b, me))
        return b;
    for (uint32_t i = 0; i < shape.slotCount; ++i)
      if (StatBlock *b = statsSlot(h, shape, i); takeOverFromDead(b, me))
        return b;
    if (monotonicNs() > deadline)
      return nullptr;
  }
}

// Locks a slot for reading or clearing; false if a live owner kept it past the
// reader's patience (the caller then uses it unlocked and must not unlock it).
bool lockSlotForReader(StatBlock *b, uint32_t me) {
  if (tryLockSlot(b, me))
    return true;
  int64_t deadline = monotonicNs() + kReaderPatienceNs;
  for (;;) {
    sched_yield();
    if (tryLockSlot(b, me) || takeOverFromDead(b, me))
      return true;
    if (monotonicNs() > deadline)
      return false;
  }
}

template <class T> std::atomic_ref<T> atomicField(T &field) { return std::atomic_ref<T>(field); }

// The count goes last, with release: a reader that sees a sample counted sees it
// in sum, min, max and the buckets too.
void overflowAdd(StatsHeader *h, const StatsHeader &shape, int64_t v) {
  StatBlock *b = statsSlot(h, shape, shape.slotCount);
  atomicField(b->sum).fetch_add(v, std::memory_order_relaxed);
  auto min = atomicField(b->min);
  for (int64_t m = min.load(std::memory_order_relaxed); v < m;)
    if (min.compare_exchange_weak(m, v, std::memory_order_relaxed))
      break;
  auto max = atomicField(b->max);
  for (int64_t m = max.load(std::memory_order_relaxed); v > m;)
    if (max.compare_exchange_weak(m, v, std::memory_order_relaxed))
      break;
  if (shape.shape.histKind != SONDE_STAT_HIST_NONE)
    atomicField(blockBuckets(b)[histogramBucket(shape.shape, v)])
        .fetch_add(1, std::memory_order_relaxed);
  atomicField(b->count).fetch_add(1, std::memory_order_release);
}

void overflowReset(StatsHeader *h, const StatsHeader &shape) {
  StatBlock *b = statsSlot(h, shape, shape.slotCount);
  atomicField(b->count).store(0, std::memory_order_relaxed);
  atomicField(b->sum).store(0, std::memory_order_relaxed);
  atomicField(b->min).store(INT64_MAX, std::memory_order_relaxed);
  atomicField(b->max).store(INT64_MIN, std::memory_order_relaxed);
  for (uint32_t i = 0; i < shape.shape.buckets; ++i)
    atomicField(blockBuckets(b)[i]).store(0, std::memory_order_relaxed);
}

// The overflow block enters the merge as one more CPU whose samples all sit at their
// mean (its variance is unknown: no Welford state can be kept with atomics).
void mergeOverflow(StatsHeader *h, const StatsHeader &shape, SlotMerge &merge) {
  StatBlock *b = statsSlot(h, shape, shape.slotCount);
  StatBlock scalars{};
  scalars.count = atomicField(b->count).load(std::memory_order_acquire);
  if (scalars.count == 0)
    return;
  scalars.sum = atomicField(b->sum).load(std::memory_order_relaxed);
  scalars.min = atomicField(b->min).load(std::memory_order_relaxed);
  scalars.max = atomicField(b->max).load(std::memory_order_relaxed);
  scalars.avgS = stapDiv64(shiftLeft(scalars.sum, shape.shape.varianceShift), scalars.count);
  int64_t buckets[kMaxBuckets];
  for (uint32_t i = 0; i < shape.shape.buckets; ++i)
    buckets[i] = atomicField(blockBuckets(b)[i]).load(std::memory_order_relaxed);
  merge.add(scalars, buckets);
}

} // namespace

void scalarStatsInit(StatsHeader *h) { overflowReset(h, *h); }

void scalarStatsAdd(StatsHeader *h, int64_t v) {
  const StatsHeader &shape = *trustedStats(h);
  uint32_t n = shape.slotCount;
  uint32_t me = myPid();
  uint32_t home = currentCpu();
  if (home >= n)
    home %= n;
  StatBlock *b = statsSlot(h, shape, home);
  if (!tryLockSlot(b, me)) {
    b = nullptr;
    for (uint32_t i = 1; i < n && !b; ++i)
      if (StatBlock *other = statsSlot(h, shape, wrapSlot(home + i, n)); tryLockSlot(other, me))
        b = other;
    if (!b && !(b = lockAnySlotSlow(h, shape, home, me))) {
      overflowAdd(h, shape, v);
      return;
    }
  }
  statAdd(*b, shape.shape, v);
  unlockSlot(b);
}

void scalarStatsSummary(StatsHeader *h, bool withBuckets, sonde_stat_summary &out) {
  const StatsHeader &shape = *trustedStats(h);
  uint32_t me = myPid();
  SlotMerge merge(shape.shape, withBuckets);
  for (uint32_t i = 0; i < shape.slotCount; ++i) {
    StatBlock *b = statsSlot(h, shape, i);
    bool locked = lockSlotForReader(b, me);
    merge.add(*b);
    if (locked)
      unlockSlot(b);
  }
  mergeOverflow(h, shape, merge);
  merge.finish(out);
}

void scalarStatsClear(StatsHeader *h) {
  const StatsHeader &shape = *trustedStats(h);
  uint32_t me = myPid();
  for (uint32_t i = 0; i < shape.slotCount; ++i) {
    StatBlock *b = statsSlot(h, shape, i);
    bool locked = lockSlotForReader(b, me);
    statReset(*b, shape.shape);
    if (locked)
      unlockSlot(b);
  }
  overflowReset(h, shape);
}

bool scalarStatsCheck(StatsHeader *h) {
  const StatsHeader &shape = *trustedStats(h);
  for (uint32_t i = 0; i <= shape.slotCount; ++i) {
    StatBlock *b = statsSlot(h, shape, i);
    uint32_t owner = b->slotLock.load(std::memory_order_relaxed);
    if (owner != 0 && !plausiblePid(owner)) {
      noteSegmentCorruption(b, "a per-CPU slot's lock word %u names no process", owner);
      return false;
    }
    if (const char *problem = statBlockProblem(*b, shape.shape)) {
      noteSegmentCorruption(b, std::string(problem) + " in per-CPU slot " + std::to_string(i));
      return false;
    }
  }
  return true;
}

} // namespace sonde::values

extern "C" void sonde_values_forked(void) { sonde::values::refreshMyPid(); }
