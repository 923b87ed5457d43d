// Futex calls on words in memory shared between processes (so never
// FUTEX_PRIVATE_FLAG): the relay's producers and consumer sleep on them.
#pragma once

#include <atomic>
#include <cstdint>

namespace sonde::transport {

// Sleeps while *word == expected, at most timeoutNs. Returns false on timeout;
// true on a wakeup, a changed word or a signal (callers re-check their condition).
bool futexWait(std::atomic<uint32_t> &word, uint32_t expected, uint64_t timeoutNs);
void futexWakeAll(std::atomic<uint32_t> &word);

// CLOCK_MONOTONIC in nanoseconds (vDSO: no syscall).
uint64_t monotonicNs();

} // namespace sonde::transport
