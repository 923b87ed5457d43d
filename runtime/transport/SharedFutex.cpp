#include "runtime/transport/SharedFutex.h"

#include <cerrno>
#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde::transport {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

bool futexWait(std::atomic<uint32_t> &word, uint32_t expected, uint64_t timeoutNs) {
  timespec ts{time_t(timeoutNs / 1'000'000'000), long(timeoutNs % 1'000'000'000)};
  long rc = syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT, expected, &ts,
                    nullptr, 0);
  return rc == 0 || errno != ETIMEDOUT;
}

void futexWakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

uint64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

} // namespace sonde::transport
