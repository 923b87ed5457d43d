// Where script output goes (the text transport): a file descriptor written in
// whole chunks. Each thread formats into its own buffer (ThreadState) and hands
// complete handler output here, so lines from concurrent handlers never interleave.
#pragma once

#include <cstddef>
#include <mutex>

namespace sonde::session {

class OutputSink {
public:
  explicit OutputSink(int fd) : fd_(fd) {}
  // Writes all of [data, data+size); a failing descriptor (closed pipe) drops output
  // rather than stopping the session, as stap's consumer does.
  void write(const char *data, size_t size);
  int fd() const { return fd_; }
  // In a fork child: another thread of the parent may have held the lock.
  void resetAfterFork();

private:
  int fd_;
  std::mutex mutex_;
};

// Per-thread output buffer: handlers append, the runner flushes after each handler
// (and on overflow), so one handler's output reaches the sink in one piece.
class OutputBuffer {
public:
  static constexpr size_t kCapacity = 65536;
  // Space for one formatted print (stap's per-print limit).
  char *reserve(size_t n, OutputSink &sink);
  void commit(size_t n) { used_ += n; }
  void append(const char *data, size_t n, OutputSink &sink);
  void flush(OutputSink &sink);

private:
  char data_[kCapacity];
  size_t used_ = 0;
};

} // namespace sonde::session
