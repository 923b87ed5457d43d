// Where script output goes (the text transport): a file descriptor written in
// whole chunks. Each thread formats into its own buffer (ThreadState) and hands
// complete handler output here, so lines from concurrent handlers never interleave.
#pragma once

#include "runtime/transport/RecordCodec.h"

#include <cstddef>
#include <mutex>

namespace sonde::transport {
class RelayProducer;
} // namespace sonde::transport

namespace sonde::session {

class OutputSink {
public:
  explicit OutputSink(int fd);
  // Writes all of [data, data+size); a failing descriptor (closed pipe) drops output
  // rather than stopping the session, as stap's consumer does.
  void write(const char *data, size_t size);
  int fd() const { return fd_; }
  // In a fork child: another thread of the parent may have held the lock.
  void resetAfterFork();

private:
  int fd_;
  // A pipe is often shared with the traced command's own output; writes up to
  // PIPE_BUF bytes are atomic there, so larger ones go in pieces ending at a
  // newline, and no line of ours is split by another process's write.
  bool pipe_ = false;
  std::mutex mutex_;
};

// Per-thread output buffer: handlers append, the runner flushes after each handler
// (and on overflow), so one handler's output reaches the sink in one piece. With
// the relay transport the text goes, as text records, into the thread's ring.
class OutputBuffer {
public:
  static constexpr size_t kCapacity = 65536;
  // Text records of at most this many bytes (a record must fit a sub-buffer).
  static constexpr size_t kTextRecordBytes = 16384;

  // From now on flush() writes records into `producer` (this thread's).
  void sendToRelay(transport::RelayProducer *producer, sonde_record_stream *stream,
                   const sonde_trace_clock *clock) {
    relay_ = producer;
    stream_ = stream;
    clock_ = clock;
  }
  // Space for one formatted print (stap's per-print limit).
  char *reserve(size_t n, OutputSink &sink);
  void commit(size_t n) { used_ += n; }
  void append(const char *data, size_t n, OutputSink &sink);
  void flush(OutputSink &sink);

  // With the relay transport: the pending text into the ring (no sink needed).
  void flushRelayed() {
    if (relay_ && used_ > 0)
      flushToRelay();
    used_ = relay_ ? 0 : used_;
  }

private:
  void flushToRelay();

  char data_[kCapacity + 1]; // + a NUL ending the text record being encoded
  size_t used_ = 0;
  transport::RelayProducer *relay_ = nullptr;
  sonde_record_stream *stream_ = nullptr;
  const sonde_trace_clock *clock_ = nullptr;
};

} // namespace sonde::session
