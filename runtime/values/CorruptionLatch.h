// The first sign that a traced process wrote over memory or messages sonde
// reads (the state segment, relay rings, netlink batches): kept once, with what
// was found, for the session to end on. Any thread may note; later notes are
// dropped, so the message names the first damage seen.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

namespace sonde::values {

class CorruptionLatch {
public:
  // Keeps `what` unless something was noted before.
  void note(const std::string &what);
  bool tripped() const { return tripped_.load(std::memory_order_acquire); }
  // What was noted first, "" if nothing.
  std::string what() const;

private:
  std::atomic<bool> tripped_{false};
  mutable std::mutex mutex_;
  std::string what_;
};

} // namespace sonde::values
