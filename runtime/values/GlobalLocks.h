// The per-global locks: robust, process-shared pthread mutexes in the segment.
//
// A handler takes every lock it needs together, all or none, the way stap's
// stp_lock_probe does: each attempt that finds a lock busy spends one retry of a
// shared MAXTRYLOCK budget and waits TRYLOCKDELAY; when the budget is gone the
// locks taken so far are released and the hit is skipped. Robust mutexes make the
// kernel hand a dead holder's lock to the next taker with EOWNERDEAD; we then repair
// the global (a map may be half-updated) and mark the mutex consistent, so a
// killed target never wedges sonde. There is no robust rwlock in glibc, so readers
// take the same mutex as writers.
#pragma once

#include "runtime/values/SegmentFormat.h"

namespace sonde::values {

// Initializes a robust, process-shared mutex in zeroed shared memory.
void initGlobalLock(pthread_mutex_t *m);

// See sonde_locks_take / sonde_locks_release.
int takeGlobalLocks(void *base, const uint64_t *offsets, uint32_t count);
void releaseGlobalLocks(void *base, const uint64_t *offsets, uint32_t count);

// Brings a global whose lock holder died back to a consistent state.
void repairGlobal(GlobalHeader *g);

} // namespace sonde::values
