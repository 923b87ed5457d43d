// The per-global locks: one word in each global's header (SegmentFormat.h),
// shared by every process that maps the segment.
//
// A handler takes every lock it needs together, all or none, the way stap's
// stp_lock_probe does: each attempt that finds a lock busy spends one retry of a
// shared MAXTRYLOCK budget and waits TRYLOCKDELAY; past the budget it sleeps on
// the lock (futex) for a while, since the holder is nearly always a preempted
// thread; when that runs out too, the locks taken so far are released and the hit
// is skipped. A lock whose holder's process died (a killed target) is taken over
// and the global repaired (a map may be half-updated), so a dead target never
// wedges sonde. There is no shared-reader mode: readers lock like writers.
//
// The word holds the holder's pid, which a taker checks before trusting it: a
// word naming no possible process is corruption (noted for sonde's segment), and
// the hit is skipped.
#pragma once

#include "runtime/values/SegmentFormat.h"

namespace sonde::values {

// See sonde_locks_take / sonde_locks_release.
int takeGlobalLocks(void *base, const uint64_t *offsets, uint32_t count);
void releaseGlobalLocks(void *base, const uint64_t *offsets, uint32_t count);

// Brings a global whose lock holder died back to a consistent state.
void repairGlobal(GlobalHeader *g);

// One attempt at a single lock, without waiting (a dead holder's lock is taken
// over): for sonde's checks once no handler should hold any.
enum class LockAttempt { Taken, Held, Corrupt };
LockAttempt tryGlobalLock(GlobalHeader *g, uint32_t *holder);

} // namespace sonde::values
