#include "runtime/values/GlobalLocks.h"

#include "runtime/values/MapTable.h"
#include "runtime/values/ProcessIdentity.h"
#include "runtime/values/SegmentShadow.h"

#include <algorithm>
#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde::values {

namespace {

constexpr uint32_t kHolderMask = ~kLockWaiters;

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Shared (not FUTEX_PRIVATE) operations: the word lives in a mapping several
// processes share.
void futexWait(std::atomic<uint32_t> &word, uint32_t expected, int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// stap busy-waits (udelay); we first give the CPU away once, since on a small
// machine the holder may be waiting for this very CPU, then spin out the delay.
void tryLockDelay(uint32_t micros) {
  int64_t deadline = monotonicNs() + int64_t{micros} * 1000;
  sched_yield();
  while (monotonicNs() < deadline)
    __builtin_ia32_pause();
}

enum class Attempt { Taken, Busy, Corrupt };

Attempt classify(uint32_t word) {
  return plausiblePid(word & kHolderMask) ? Attempt::Busy : Attempt::Corrupt;
}

Attempt tryTake(GlobalHeader *g, uint32_t me, uint32_t &seen) {
  uint32_t expected = 0;
  if (g->lock.compare_exchange_strong(expected, me, std::memory_order_acquire,
                                      std::memory_order_relaxed))
    return Attempt::Taken;
  seen = expected;
  return classify(expected);
}

// Takes the lock from a holder whose process is gone, keeping the waiters bit
// (sleepers are woken at our release), and repairs what it left half-done.
bool takeFromDead(GlobalHeader *g, uint32_t seen, uint32_t me) {
  if (!processIsGone(seen & kHolderMask) ||
      !g->lock.compare_exchange_strong(seen, me | (seen & kLockWaiters), std::memory_order_acquire,
                                       std::memory_order_relaxed))
    return false;
  repairGlobal(g);
  return true;
}

// After the spin budget, a holder still there is nearly always a thread the
// scheduler took the CPU from (stap's handlers run with preemption off; ours do
// not): sleep on the lock until it comes back. Only a holder stuck for this long
// (a stopped process) makes the hit a skip. A holder that dies meanwhile is
// noticed at the next wake-up: sleeps are short.
constexpr int64_t kDescheduledHolderWaitNs = 1'000'000'000;
constexpr int64_t kDeadHolderCheckNs = 10'000'000;

Attempt waitForHolder(GlobalHeader *g, uint32_t me, uint32_t &seen) {
  int64_t deadline = monotonicNs() + kDescheduledHolderWaitNs;
  for (;;) {
    uint32_t word = g->lock.load(std::memory_order_relaxed);
    if (word == 0) {
      if (g->lock.compare_exchange_strong(word, me, std::memory_order_acquire,
                                          std::memory_order_relaxed))
        return Attempt::Taken;
      continue;
    }
    seen = word;
    if (classify(word) == Attempt::Corrupt)
      return Attempt::Corrupt;
    if (takeFromDead(g, word, me))
      return Attempt::Taken;
    int64_t left = deadline - monotonicNs();
    if (left <= 0)
      return Attempt::Busy;
    if ((word & kLockWaiters) == 0) {
      if (!g->lock.compare_exchange_strong(word, word | kLockWaiters, std::memory_order_relaxed))
        continue;
      word |= kLockWaiters;
    }
    futexWait(g->lock, word, std::min(left, kDeadHolderCheckNs));
  }
}

void releaseOne(GlobalHeader *g, uint32_t me) {
  uint32_t old = g->lock.exchange(0, std::memory_order_release);
  if (old & kLockWaiters)
    futexWakeAll(g->lock);
  if ((old & kHolderMask) != me)
    noteSegmentCorruption(g, "its lock word changed to %u while sonde held the lock", old);
}

} // namespace

int takeGlobalLocks(void *base, const uint64_t *offsets, uint32_t count) {
  const sonde_limits &limits = trustedLimits(static_cast<const sonde_segment *>(base));
  const uint32_t me = myPid();
  uint32_t retries = 0;
  for (uint32_t i = 0; i < count; ++i) {
    GlobalHeader *g = globalAt(base, offsets[i]);
    for (;;) {
      uint32_t seen = 0;
      Attempt a = tryTake(g, me, seen);
      if (a == Attempt::Busy && retries < limits.max_try_lock) {
        ++retries;
        tryLockDelay(limits.try_lock_delay_us);
        continue;
      }
      if (a == Attempt::Busy)
        a = waitForHolder(g, me, seen);
      if (a == Attempt::Taken)
        break;
      if (a == Attempt::Busy && limits.suppress_time_limits)
        continue; // no time limit: sleep on (a dead holder is still noticed)
      if (a == Attempt::Corrupt)
        noteSegmentCorruption(g, "its lock word %u names no process", seen);
      releaseGlobalLocks(base, offsets, i);
      return SONDE_ERR_SKIPPED;
    }
  }
  return SONDE_OK;
}

void releaseGlobalLocks(void *base, const uint64_t *offsets, uint32_t count) {
  const uint32_t me = myPid();
  for (uint32_t i = count; i-- > 0;)
    releaseOne(globalAt(base, offsets[i]), me);
}

LockAttempt tryGlobalLock(GlobalHeader *g, uint32_t *holder) {
  const uint32_t me = myPid();
  uint32_t seen = 0;
  Attempt a = tryTake(g, me, seen);
  *holder = seen & kHolderMask;
  if (a == Attempt::Busy && takeFromDead(g, seen, me))
    a = Attempt::Taken;
  if (a == Attempt::Corrupt)
    noteSegmentCorruption(g, "its lock word %u names no process", seen);
  return a == Attempt::Taken  ? LockAttempt::Taken
         : a == Attempt::Busy ? LockAttempt::Held
                              : LockAttempt::Corrupt;
}

void repairGlobal(GlobalHeader *g) {
  const GlobalHeader *shape = trustedGlobal(g);
  switch (shape->kind) {
  case GlobalKind::Map: MapTable(globalData<MapHeader>(g)).repair(); break;
  case GlobalKind::ScalarString:
    if (shape->stringBytes)
      globalData<char>(g)[shape->stringBytes - 1] = '\0';
    break;
  case GlobalKind::ScalarLong:
  case GlobalKind::ScalarStats: break;
  }
}

} // namespace sonde::values
