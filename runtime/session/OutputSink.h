// Where script output goes (the text transport): a file descriptor written in
// whole chunks. Each thread formats into its own buffer (ThreadState) and hands
// complete handler output here, so lines from concurrent handlers never interleave.
#pragma once

#include "runtime/transport/RecordCursor.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <sys/types.h>

namespace sonde::values {
struct OutputAccounting;
} // namespace sonde::values

namespace sonde::session {

class RecordWriter;

class OutputSink {
public:
  // `name` says what `fd` is in messages: a file's path, or "" for standard output.
  explicit OutputSink(int fd, std::string name = "");
  ~OutputSink();
  // -S SIZE,N: output goes to `base`.0, .1, ..., a new file once one holds
  // `maxBytes` (whole writes: a handler's output is never split), keeping the
  // newest `keep` files (0: all). Opens the first file.
  bool rotate(const std::string &base, uint64_t maxBytes, uint32_t keep, std::string *error);
  // -o FILE without -S: the sink owns the descriptor, opened on `path`, and
  // switchFile() moves on to `path`.1, .2, ... (stap's names).
  void adopt(const std::string &path);
  // switch_file(): the next file now, even if this one is empty. Without a file
  // (stdout) nothing happens. False (with the reason) if the next file cannot be
  // opened; the output then stays where it was.
  bool switchFile(std::string *error);
  // Writes [data, data+size) and returns the bytes written: all of them unless
  // a write fails. The first failure is kept (failure()) and the output takes
  // nothing more: the bytes not written, then and later, are counted as lost
  // (lost()), and callers count the records those bytes held. The session goes
  // on: a traced process never stops for its output.
  size_t write(const char *data, size_t size);
  // Losses are also counted in `shared` (the script segment's), where sonde
  // finds those of traced processes.
  void countLossesIn(values::OutputAccounting *shared) { shared_ = shared; }
  struct Loss {
    uint64_t bytes = 0;
    uint64_t lines = 0; // newlines in those bytes
  };
  Loss lost() const;
  // After a write error, "cannot write 'FILE': REASON"; else "".
  std::string failure() const;
  // -S: a part that could not be opened ("cannot open ...; output went on in
  // 'FILE'"); else "".
  std::string rotationFailure() const;
  // Closes a file the sink opened or adopted; a failed close (an error the file
  // system reports late) is a write failure.
  void close();
  int fd() const { return fd_; }
  // What messages call the output now: a file's path, or "" (standard output).
  std::string name() const;
  // In a fork child: another thread of the parent may have held the lock.
  void resetAfterFork();

private:
  bool openPart(std::string *error);
  // One write(2) that never raises SIGPIPE (a closed pipe must not kill a
  // traced process); -1 with errno on failure.
  ssize_t writeOnce(const char *data, size_t size);
  void fail(int error);
  void countLost(const char *data, size_t size);

  int fd_;
  std::string name_;
  // -S or adopt(): the files written so far (the current one is part_ - 1).
  std::string rotateBase_;
  uint64_t rotateBytes_ = 0, written_ = 0;
  uint32_t rotateKeep_ = 0, part_ = 0;
  // A pipe is often shared with the traced command's own output; writes up to
  // PIPE_BUF bytes are atomic there, so larger ones go in pieces ending at a
  // newline, and no line of ours is split by another process's write.
  bool pipe_ = false;
  bool socket_ = false;
  int errno_ = 0; // the first failed write's; 0 while the output works
  std::string failedName_;
  std::string rotationFailure_;
  Loss lost_;
  values::OutputAccounting *shared_ = nullptr;
  mutable std::mutex mutex_;
};

// "cannot write 'NAME': REASON" ("cannot write to standard output: ..." for "").
std::string writeFailure(const std::string &name, int error);

// Per-thread output buffer: handlers append, the runner flushes after each handler
// (and on overflow), so one handler's output reaches the sink in one piece. With
// a record transport the text goes, as text records, to the thread's RecordWriter.
class OutputBuffer {
public:
  static constexpr size_t kCapacity = 65536;
  // Text records of at most this many bytes (a record must fit a sub-buffer).
  static constexpr size_t kTextRecordBytes = 16384;

  // From now on flush() writes text records into `writer` (this thread's),
  // which generated code may append printf records to through `cursor`: text
  // waiting here closes that path until the text is written (in order).
  void sendAsRecords(RecordWriter *writer, sonde_record_cursor *cursor) {
    records_ = writer;
    cursor_ = cursor;
  }
  // Space for one formatted print (stap's per-print limit).
  char *reserve(size_t n, OutputSink &sink);
  void commit(size_t n) {
    used_ += n;
    holdInlineRecords();
  }
  void append(const char *data, size_t n, OutputSink &sink);
  void flush(OutputSink &sink);

  // With a record transport: the pending text as records (no sink needed).
  void flushRecords() {
    if (used_ > 0 && records_) {
      writeRecords();
      used_ = 0;
    }
  }

private:
  void writeRecords();
  void holdInlineRecords() {
    if (cursor_)
      cursor_->limit = nullptr;
  }

  char data_[kCapacity + 1]; // + a NUL ending the text record being encoded
  size_t used_ = 0;
  RecordWriter *records_ = nullptr;
  sonde_record_cursor *cursor_ = nullptr;
};

} // namespace sonde::session
