#include "runtime/values/ScalarStats.h"

#include "runtime/values/CurrentCpu.h"
#include "runtime/values/StapArith.h"
#include "runtime/values/StatAccumulator.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

namespace sonde::values {

namespace {

// getpid() is a system call in current glibc; the slot owner id must cost a load.
std::atomic<uint32_t> cachedPid{0};
void refreshPid() { cachedPid.store(static_cast<uint32_t>(getpid()), std::memory_order_relaxed); }
[[maybe_unused]] const int pidRefreshOnFork = pthread_atfork(nullptr, nullptr, refreshPid);

uint32_t myPid() {
  uint32_t pid = cachedPid.load(std::memory_order_relaxed);
  if (__builtin_expect(pid == 0, 0)) {
    refreshPid();
    pid = cachedPid.load(std::memory_order_relaxed);
  }
  return pid;
}

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

// A process that no longer runs: gone, or a zombie nobody reaped yet. Plain system
// calls only: this may run inside a target's signal handler.
bool processIsGone(uint32_t pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0)
    return errno == ESRCH;
  char path[32] = "/proc/";
  char digits[12];
  int n = 0;
  for (uint32_t v = pid; v != 0 || n == 0; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  size_t len = std::strlen(path);
  while (n > 0)
    path[len++] = digits[--n];
  std::memcpy(path + len, "/stat", 6);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[512];
  ssize_t got = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (got <= 0)
    return false;
  buf[got] = '\0';
  const char *paren = std::strrchr(buf, ')');
  return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

// Claims a slot whose owner process died in the middle of an update.
bool takeOverFromDead(StatBlock *b, uint32_t me) {
  uint32_t owner = b->slotLock.load(std::memory_order_relaxed);
  return owner != 0 && owner != me && processIsGone(owner) &&
         b->slotLock.compare_exchange_strong(owner, me, std::memory_order_acquire,
                                             std::memory_order_relaxed);
}

uint32_t wrapSlot(uint32_t s, uint32_t n) { return s < n ? s : s - n; }

// Every slot was busy on the first pass: let the holders run, retry, take over the
// slots of dead owners; nullptr once the patience is spent.
StatBlock *lockAnySlotSlow(StatsHeader *h, uint32_t home, uint32_t me) {
  int64_t deadline = monotonicNs() + kWriterPatienceNs;
  for (;;) {
    sched_yield();
    for (uint32_t i = 0; i < h->slotCount; ++i)
      if (StatBlock *b = statsSlot(h, wrapSlot(home + i, h->slotCount)); tryLockSlot(b, me))
        return b;
    for (uint32_t i = 0; i < h->slotCount; ++i)
      if (StatBlock *b = statsSlot(h, i); takeOverFromDead(b, me))
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
void overflowAdd(StatsHeader *h, int64_t v) {
  StatBlock *b = statsSlot(h, h->slotCount);
  atomicField(b->sum).fetch_add(v, std::memory_order_relaxed);
  auto min = atomicField(b->min);
  for (int64_t m = min.load(std::memory_order_relaxed); v < m;)
    if (min.compare_exchange_weak(m, v, std::memory_order_relaxed))
      break;
  auto max = atomicField(b->max);
  for (int64_t m = max.load(std::memory_order_relaxed); v > m;)
    if (max.compare_exchange_weak(m, v, std::memory_order_relaxed))
      break;
  if (h->shape.histKind != SONDE_STAT_HIST_NONE)
    atomicField(blockBuckets(b)[histogramBucket(h->shape, v)])
        .fetch_add(1, std::memory_order_relaxed);
  atomicField(b->count).fetch_add(1, std::memory_order_release);
}

void overflowReset(StatsHeader *h) {
  StatBlock *b = statsSlot(h, h->slotCount);
  atomicField(b->count).store(0, std::memory_order_relaxed);
  atomicField(b->sum).store(0, std::memory_order_relaxed);
  atomicField(b->min).store(INT64_MAX, std::memory_order_relaxed);
  atomicField(b->max).store(INT64_MIN, std::memory_order_relaxed);
  for (uint32_t i = 0; i < h->shape.buckets; ++i)
    atomicField(blockBuckets(b)[i]).store(0, std::memory_order_relaxed);
}

// The overflow block enters the merge as one more CPU whose samples all sit at their
// mean (its variance is unknown: no Welford state can be kept with atomics).
void mergeOverflow(StatsHeader *h, SlotMerge &merge) {
  StatBlock *b = statsSlot(h, h->slotCount);
  StatBlock scalars{};
  scalars.count = atomicField(b->count).load(std::memory_order_acquire);
  if (scalars.count == 0)
    return;
  scalars.sum = atomicField(b->sum).load(std::memory_order_relaxed);
  scalars.min = atomicField(b->min).load(std::memory_order_relaxed);
  scalars.max = atomicField(b->max).load(std::memory_order_relaxed);
  scalars.avgS = stapDiv64(shiftLeft(scalars.sum, h->shape.varianceShift), scalars.count);
  int64_t buckets[kMaxBuckets];
  for (uint32_t i = 0; i < h->shape.buckets; ++i)
    buckets[i] = atomicField(blockBuckets(b)[i]).load(std::memory_order_relaxed);
  merge.add(scalars, buckets);
}

} // namespace

void scalarStatsInit(StatsHeader *h) { overflowReset(h); }

void scalarStatsAdd(StatsHeader *h, int64_t v) {
  uint32_t n = h->slotCount;
  uint32_t me = myPid();
  uint32_t home = currentCpu();
  if (home >= n)
    home %= n;
  StatBlock *b = statsSlot(h, home);
  if (!tryLockSlot(b, me)) {
    b = nullptr;
    for (uint32_t i = 1; i < n && !b; ++i)
      if (StatBlock *other = statsSlot(h, wrapSlot(home + i, n)); tryLockSlot(other, me))
        b = other;
    if (!b && !(b = lockAnySlotSlow(h, home, me))) {
      overflowAdd(h, v);
      return;
    }
  }
  statAdd(*b, h->shape, v);
  unlockSlot(b);
}

void scalarStatsSummary(StatsHeader *h, bool withBuckets, sonde_stat_summary &out) {
  uint32_t me = myPid();
  SlotMerge merge(h->shape, withBuckets);
  for (uint32_t i = 0; i < h->slotCount; ++i) {
    StatBlock *b = statsSlot(h, i);
    bool locked = lockSlotForReader(b, me);
    merge.add(*b);
    if (locked)
      unlockSlot(b);
  }
  mergeOverflow(h, merge);
  merge.finish(out);
}

void scalarStatsClear(StatsHeader *h) {
  uint32_t me = myPid();
  for (uint32_t i = 0; i < h->slotCount; ++i) {
    StatBlock *b = statsSlot(h, i);
    bool locked = lockSlotForReader(b, me);
    statReset(*b, h->shape);
    if (locked)
      unlockSlot(b);
  }
  overflowReset(h);
}

} // namespace sonde::values

extern "C" void sonde_values_forked(void) { sonde::values::refreshPid(); }
