// A bounded output cursor: every conversion writes through it, so nothing can run
// past the caller's buffer. Mirrors stap's `str`/`end` pair: writes beyond the end
// are dropped, and `room()` is what stap clamps widths and precisions to. With a
// null buffer it only counts, for stap's sizing pass.
#pragma once

#include <cstddef>
#include <cstring>

namespace sonde::rt {

class TextWriter {
public:
  TextWriter(char *out, size_t cap) : out_(out), cap_(cap) {}

  size_t size() const { return pos_; }
  bool full() const { return pos_ >= cap_; }
  // Bytes still writable (stap's `end - str + 1`).
  size_t room() const { return cap_ - pos_; }

  bool counting() const { return out_ == nullptr; }
  // Lowers the capacity (never below what is already written).
  void shrink(size_t cap) {
    if (cap < cap_)
      cap_ = cap > pos_ ? cap : pos_;
  }

  void put(char c) {
    if (pos_ < cap_) {
      if (out_ != nullptr)
        out_[pos_] = c;
      ++pos_;
    }
  }
  void fill(char c, size_t n) {
    n = n < room() ? n : room();
    if (out_ != nullptr)
      std::memset(out_ + pos_, c, n);
    pos_ += n;
  }
  void write(const char *s, size_t n) {
    n = n < room() ? n : room();
    if (out_ != nullptr) {
      // Most writes are a few bytes, where a loop beats a call to memcpy.
      if (n <= 16) {
        for (size_t i = 0; i < n; ++i)
          out_[pos_ + i] = s[i];
      } else {
        std::memcpy(out_ + pos_, s, n);
      }
    }
    pos_ += n;
  }
  void write(const char *s) { write(s, std::strlen(s)); }
  // Where the next byte goes (null when counting); callers that fill it
  // themselves then advance().
  char *cursor() { return out_ != nullptr ? out_ + pos_ : nullptr; }
  void advance(size_t n) { pos_ += n < room() ? n : room(); }
  // Ends the text as a C string of at most cap - 1 bytes, like stap's sprintf:
  // the last byte gives way to the NUL when the output filled the buffer.
  size_t terminate() {
    if (cap_ == 0)
      return 0;
    if (pos_ == cap_)
      --pos_;
    out_[pos_] = '\0';
    return pos_;
  }

private:
  char *out_;
  size_t cap_;
  size_t pos_ = 0;
};

} // namespace sonde::rt
