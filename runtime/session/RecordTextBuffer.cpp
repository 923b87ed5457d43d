#include "runtime/session/RecordTextBuffer.h"

#include <algorithm>

namespace sonde::session {

void RecordTextBuffer::flush() {
  if (!text_.empty()) {
    size_t written = write_(text_.data(), text_.size());
    if (written < text_.size()) {
      // Records ending within the written bytes arrived; the rest did not.
      auto firstLost = std::upper_bound(ends_.begin(), ends_.end(), written);
      notWritten_ += static_cast<uint64_t>(ends_.end() - firstLost);
    }
  }
  text_.clear();
  ends_.clear();
}

} // namespace sonde::session
