#include "runtime/values/CorruptionLatch.h"

namespace sonde::values {

void CorruptionLatch::note(const std::string &what) {
  std::lock_guard<std::mutex> g(mutex_);
  if (tripped_.load(std::memory_order_relaxed))
    return;
  what_ = what;
  tripped_.store(true, std::memory_order_release);
}

std::string CorruptionLatch::what() const {
  std::lock_guard<std::mutex> g(mutex_);
  return what_;
}

} // namespace sonde::values
