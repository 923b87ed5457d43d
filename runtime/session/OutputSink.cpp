#include "runtime/session/OutputSink.h"

#include "runtime/session/RecordWriter.h"
#include "runtime/transport/OutputPaths.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::session {

OutputSink::OutputSink(int fd) : fd_(fd) {
  struct stat st;
  pipe_ = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

OutputSink::~OutputSink() {
  if (!rotateBase_.empty() && fd_ >= 0)
    close(fd_);
}

bool OutputSink::rotate(const std::string &base, uint64_t maxBytes, uint32_t keep,
                        std::string *error) {
  rotateBase_ = base;
  rotateBytes_ = maxBytes;
  rotateKeep_ = keep;
  return openPart(error);
}

void OutputSink::adopt(const std::string &path) {
  rotateBase_ = path;
  part_ = 1; // the adopted file is the first; the next is path.1
}

bool OutputSink::switchFile(std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  return rotateBase_.empty() || openPart(error);
}

bool OutputSink::openPart(std::string *error) {
  std::string path = rotateBase_ + "." + std::to_string(part_);
  int fd = transport::openOutputFile(path, error);
  if (fd < 0)
    return false;
  if (part_ > 0)
    close(fd_);
  fd_ = fd;
  written_ = 0;
  if (rotateKeep_ > 0 && part_ >= rotateKeep_)
    transport::removeOutputFile(rotateBase_ + "." + std::to_string(part_ - rotateKeep_));
  ++part_;
  return true;
}

void OutputSink::write(const char *data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rotateBytes_ > 0) {
    std::string ignored; // a file that cannot be opened keeps output in the current one
    if (written_ > 0 && written_ + size > rotateBytes_)
      openPart(&ignored);
    written_ += size;
  }
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
  commit(n);
}

void OutputBuffer::flush(OutputSink &sink) {
  if (used_ > 0 && records_)
    writeRecords();
  else if (used_ > 0)
    sink.write(data_, used_);
  used_ = 0;
}

// Text records (TraceSchema::kTextId), each a NUL-terminated slice of the
// buffer: the codec sends strings by strlen, so a NUL byte in the output (from
// print_char(0)) ends its record's text there.
void OutputBuffer::writeRecords() {
  for (size_t at = 0; at < used_;) {
    size_t n = std::min(used_ - at, kTextRecordBytes);
    char saved = data_[at + n];
    data_[at + n] = '\0';
    records_->writeText(data_ + at);
    data_[at + n] = saved;
    at += n;
  }
}

} // namespace sonde::session
