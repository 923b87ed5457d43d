#include "runtime/session/OutputSink.h"

#include "runtime/session/RecordWriter.h"
#include "runtime/transport/OutputPaths.h"
#include "runtime/values/SegmentFormat.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::session {

OutputSink::OutputSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  struct stat st;
  if (fstat(fd, &st) == 0) {
    pipe_ = S_ISFIFO(st.st_mode);
    socket_ = S_ISSOCK(st.st_mode);
  }
}

OutputSink::~OutputSink() {
  if (!rotateBase_.empty() && fd_ >= 0)
    ::close(fd_);
}

void OutputSink::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rotateBase_.empty() || fd_ < 0)
    return;
  if (::close(fd_) != 0 && errno != EINTR && errno_ == 0)
    fail(errno);
  fd_ = -1;
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
  name_ = path;
  part_ = 1; // the adopted file is the first; the next is path.1
}

bool OutputSink::switchFile(std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  // After a write error nothing more is written: no empty file either.
  return rotateBase_.empty() || errno_ != 0 || openPart(error);
}

bool OutputSink::openPart(std::string *error) {
  std::string path = rotateBase_ + "." + std::to_string(part_);
  int fd = transport::openOutputFile(path, error);
  if (fd < 0)
    return false;
  if (part_ > 0)
    ::close(fd_);
  fd_ = fd;
  name_ = path;
  written_ = 0;
  if (rotateKeep_ > 0 && part_ >= rotateKeep_)
    transport::removeOutputFile(rotateBase_ + "." + std::to_string(part_ - rotateKeep_));
  ++part_;
  return true;
}

size_t OutputSink::write(const char *data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (errno_ != 0) {
    countLost(data, size);
    return 0;
  }
  if (rotateBytes_ > 0) {
    if (written_ > 0 && written_ + size > rotateBytes_) {
      std::string current = name_, error;
      if (!openPart(&error) && rotationFailure_.empty())
        rotationFailure_ = error + "; output went on in '" + current + "'";
    }
    written_ += size;
  }
  size_t done = 0;
  while (done < size) {
    size_t piece = size - done;
    if (pipe_ && piece > PIPE_BUF) {
      // The last newline within PIPE_BUF ends the piece (a longer line must split).
      const void *nl = memrchr(data + done, '\n', PIPE_BUF);
      piece =
          nl ? static_cast<size_t>(static_cast<const char *>(nl) - (data + done)) + 1 : PIPE_BUF;
    }
    ssize_t n = writeOnce(data + done, piece);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A non-blocking descriptor we inherited: wait until it takes more.
      pollfd p{fd_, POLLOUT, 0};
      if (poll(&p, 1, -1) >= 0 || errno == EINTR)
        continue;
    }
    fail(n < 0 ? errno : EIO);
    countLost(data + done, size - done);
    break;
  }
  return done;
}

ssize_t OutputSink::writeOnce(const char *data, size_t size) {
  if (socket_)
    return ::send(fd_, data, size, MSG_NOSIGNAL);
  if (!pipe_)
    return ::write(fd_, data, size);
  // A pipe whose reader is gone raises SIGPIPE in the writing thread: block it
  // for the write and take the one it raised (not one already pending).
  sigset_t pipeSignal, saved, pending;
  sigemptyset(&pipeSignal);
  sigaddset(&pipeSignal, SIGPIPE);
  sigpending(&pending);
  bool wasPending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipeSignal, &saved);
  ssize_t n = ::write(fd_, data, size);
  int writeErrno = errno;
  if (n < 0 && writeErrno == EPIPE && !wasPending) {
    timespec none{};
    while (sigtimedwait(&pipeSignal, nullptr, &none) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  errno = writeErrno;
  return n;
}

void OutputSink::fail(int error) {
  errno_ = error;
  failedName_ = name_;
  if (shared_) {
    int32_t none = 0;
    shared_->writeErrno.compare_exchange_strong(none, error);
  }
}

void OutputSink::countLost(const char *data, size_t size) {
  auto lines = static_cast<uint64_t>(std::count(data, data + size, '\n'));
  lost_.bytes += size;
  lost_.lines += lines;
  if (shared_) {
    shared_->bytesLost.fetch_add(size, std::memory_order_relaxed);
    shared_->linesLost.fetch_add(lines, std::memory_order_relaxed);
  }
}

OutputSink::Loss OutputSink::lost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

std::string OutputSink::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return errno_ == 0 ? "" : writeFailure(failedName_, errno_);
}

std::string OutputSink::name() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return name_;
}

std::string OutputSink::rotationFailure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rotationFailure_;
}

std::string writeFailure(const std::string &name, int error) {
  return (name.empty() ? std::string("cannot write to standard output")
                       : "cannot write '" + name + "'") +
         ": " + std::strerror(error);
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
