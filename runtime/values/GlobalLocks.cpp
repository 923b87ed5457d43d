#include "runtime/values/GlobalLocks.h"

#include "runtime/values/MapTable.h"

#include <cerrno>
#include <ctime>
#include <sched.h>

namespace sonde::values {

namespace {

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// stap busy-waits (udelay); we first give the CPU away once, since on a small
// machine the holder may be waiting for this very CPU, then spin out the delay.
void tryLockDelay(uint32_t micros) {
  int64_t deadline = monotonicNs() + int64_t{micros} * 1000;
  sched_yield();
  while (monotonicNs() < deadline)
    __builtin_ia32_pause();
}

// 0 when the lock is ours (repairing it if its holder died), else the errno.
int tryTake(GlobalHeader *g) {
  int rc = pthread_mutex_trylock(&g->lock);
  if (rc == EOWNERDEAD) {
    repairGlobal(g);
    pthread_mutex_consistent(&g->lock);
    rc = 0;
  }
  return rc;
}

// After the spin budget, a holder still there is nearly always a thread the
// scheduler took the CPU from (stap's handlers run with preemption off; ours do
// not): sleep on the lock until it comes back. Only a holder stuck for this long
// (a stopped process) makes the hit a skip.
constexpr int64_t kDescheduledHolderWaitNs = 1'000'000'000;

// Sleeps until the lock is free or kDescheduledHolderWaitNs pass: 0 once ours.
int waitForHolder(GlobalHeader *g) {
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  int64_t ns = deadline.tv_nsec + kDescheduledHolderWaitNs;
  deadline.tv_sec += ns / 1'000'000'000;
  deadline.tv_nsec = ns % 1'000'000'000;
  int rc = pthread_mutex_clocklock(&g->lock, CLOCK_MONOTONIC, &deadline);
  if (rc == EOWNERDEAD) {
    repairGlobal(g);
    pthread_mutex_consistent(&g->lock);
    rc = 0;
  }
  return rc;
}

} // namespace

void initGlobalLock(pthread_mutex_t *m) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(m, &attr);
  pthread_mutexattr_destroy(&attr);
}

int takeGlobalLocks(void *base, const uint64_t *offsets, uint32_t count) {
  const auto *seg = static_cast<const SegmentHeader *>(base);
  const sonde_limits &limits = seg->limits;
  uint32_t retries = 0;
  for (uint32_t i = 0; i < count; ++i) {
    GlobalHeader *g = globalAt(base, offsets[i]);
    for (;;) {
      int rc = tryTake(g);
      if (rc == 0)
        break;
      // EBUSY spends the budget; anything else (ENOTRECOVERABLE) can never succeed.
      if (rc == EBUSY && (limits.suppress_time_limits || ++retries <= limits.max_try_lock)) {
        tryLockDelay(limits.try_lock_delay_us);
        continue;
      }
      if (rc == EBUSY && (rc = waitForHolder(g)) == 0)
        break;
      releaseGlobalLocks(base, offsets, i);
      return SONDE_ERR_SKIPPED;
    }
  }
  return SONDE_OK;
}

void releaseGlobalLocks(void *base, const uint64_t *offsets, uint32_t count) {
  for (uint32_t i = count; i-- > 0;)
    pthread_mutex_unlock(&globalAt(base, offsets[i])->lock);
}

void repairGlobal(GlobalHeader *g) {
  switch (g->kind) {
  case GlobalKind::Map: MapTable(globalData<MapHeader>(g)).repair(); break;
  case GlobalKind::ScalarString:
    if (g->stringBytes)
      globalData<char>(g)[g->stringBytes - 1] = '\0';
    break;
  case GlobalKind::ScalarLong:
  case GlobalKind::ScalarStats: break;
  }
}

} // namespace sonde::values
