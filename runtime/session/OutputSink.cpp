#include "runtime/session/OutputSink.h"

#include "runtime/session/RecordFormats.h"
#include "runtime/transport/RelayProducer.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::session {

OutputSink::OutputSink(int fd) : fd_(fd) {
  struct stat st;
  pipe_ = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

void OutputSink::write(const char *data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (size > 0) {
    size_t piece = size;
    if (pipe_ && piece > PIPE_BUF) {
      // The last newline within PIPE_BUF ends the piece (a longer line must split).
      const void *nl = memrchr(data, '\n', PIPE_BUF);
      piece = nl ? static_cast<size_t>(static_cast<const char *>(nl) - data) + 1 : PIPE_BUF;
    }
    ssize_t n = ::write(fd_, data, piece);
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
  if (used_ > 0 && relay_)
    flushToRelay();
  else if (used_ > 0)
    sink.write(data_, used_);
  used_ = 0;
}

// Text records (RecordFormats::kTextId), each a NUL-terminated slice of the
// buffer: the codec sends strings by strlen, so a NUL byte in the output (from
// print_char(0)) ends its record's text there.
void OutputBuffer::flushToRelay() {
  static const uint8_t kinds[] = {SONDE_RECORD_ARG_STRING};
  static const sonde_record_desc desc = {kinds, 1};
  for (size_t at = 0; at < used_;) {
    size_t n = std::min(used_ - at, kTextRecordBytes);
    char saved = data_[at + n];
    data_[at + n] = '\0';
    SondeFormatArg arg;
    arg.s = data_ + at;
    size_t max = sonde_record_max_size(&desc, &arg);
    if (char *out = relay_->reserve(static_cast<uint32_t>(max))) {
      size_t wrote =
          sonde_record_encode(stream_, RecordFormats::kTextId, sonde_trace_clock_read(clock_),
                              &desc, &arg, reinterpret_cast<uint8_t *>(out));
      relay_->commit(static_cast<uint32_t>(wrote));
    }
    data_[at + n] = saved;
    at += n;
  }
}

} // namespace sonde::session
