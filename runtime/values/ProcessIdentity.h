// Who the calling process is, and whether another one still runs: what the
// segment's one-word locks (global locks, stats slot locks) record and check.
// Plain system calls only: this may run inside a target's signal handler.
#pragma once

#include <cstdint>

namespace sonde::values {

// The largest pid Linux hands out (PID_MAX_LIMIT on 64-bit): a lock word naming
// a higher one was not written by a lock holder.
inline constexpr uint32_t kPidLimit = 1u << 22;

// getpid(), cached (it is a system call in current glibc); refreshed in fork
// children by an atfork handler and by sonde_values_forked().
uint32_t myPid();
void refreshMyPid();
// gettid(), cached per thread, refreshed after a refresh of the pid.
uint32_t myTid();

// Whether a lock holder's pid can be real (1 .. kPidLimit).
inline bool plausiblePid(uint32_t pid) { return pid != 0 && pid <= kPidLimit; }

// A process that no longer runs: gone, or a zombie nobody reaped yet.
bool processIsGone(uint32_t pid);

} // namespace sonde::values
