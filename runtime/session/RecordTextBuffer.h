// Text of whole records (formatted, or JSON lines) waiting to be written in one
// go, with where each record ends: when a write stops short (disk full, a
// closed pipe), the records it did not write whole are counted, so the
// transport summary's "lost" covers them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sonde::session {

class RecordTextBuffer {
public:
  // Writes the bytes and returns how many it wrote (OutputSink::write).
  using Write = std::function<size_t(const char *, size_t)>;
  // Text past this size goes out at the next record's end.
  static constexpr size_t kFlushSize = 64 * 1024;

  explicit RecordTextBuffer(Write write) : write_(std::move(write)) {}

  // Where a record's text (and text between records, such as a loss line) is
  // appended.
  std::string &text() { return text_; }
  // The text so far ends a record; a full buffer is written.
  void endRecord() {
    ends_.push_back(text_.size());
    if (text_.size() >= kFlushSize)
      flush();
  }
  void flush();
  // Records whose text was not written whole.
  uint64_t recordsNotWritten() const { return notWritten_; }

private:
  Write write_;
  std::string text_;
  std::vector<size_t> ends_; // offsets in text_ where records end
  uint64_t notWritten_ = 0;
};

} // namespace sonde::session
