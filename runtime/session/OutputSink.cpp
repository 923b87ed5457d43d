#include "runtime/session/OutputSink.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <unistd.h>

namespace sonde::session {

void OutputSink::write(const char *data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (size > 0) {
    ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void OutputSink::resetAfterFork() {
  mutex_.~mutex();
  new (&mutex_) std::mutex();
}

char *OutputBuffer::reserve(size_t n, OutputSink &sink) {
  if (used_ + n > kCapacity)
    flush(sink);
  return data_ + used_;
}

void OutputBuffer::append(const char *data, size_t n, OutputSink &sink) {
  if (n > kCapacity) {
    flush(sink);
    sink.write(data, n);
    return;
  }
  std::memcpy(reserve(n, sink), data, n);
  used_ += n;
}

void OutputBuffer::flush(OutputSink &sink) {
  if (used_ > 0)
    sink.write(data_, used_);
  used_ = 0;
}

} // namespace sonde::session
