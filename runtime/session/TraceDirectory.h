// A recorded binary trace (`-b`): a directory sonde writes while tracing and
// `sonde report` reads later. Records are stored as they travelled; formatting
// waits for the report.
//   schema                the format table (TraceSchema::serialize)
//   clock                 the trace clock's calibration (readings -> ns)
//   stream-PID-TID.bin    one file per producer thread: frames of
//                         [u32 magic "SNDF"][u32 size][u64 records lost before][size bytes]
// A frame holds whole records; the first of each producer buffer carries a full
// timestamp, so a file decodes from any frame on.
#pragma once

#include "runtime/session/RecordStreams.h"
#include "runtime/transport/OutputPaths.h"
#include "runtime/transport/TraceClock.h"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/uio.h>
#include <vector>

namespace sonde::session {

inline constexpr uint32_t kTraceFrameMagic = 0x46444e53; // "SNDF" little-endian

class TraceDirectoryWriter final : public ChunkSink {
public:
  // Creates `dir` (or takes an empty one of yours) and writes schema and clock
  // (transport/OutputPaths.h: nothing another user planted is followed).
  static std::unique_ptr<TraceDirectoryWriter> open(const std::string &dir,
                                                    const TraceSchema &schema,
                                                    const sonde_trace_clock &clock,
                                                    std::string *error);
  // -b without -o: a new directory in the current one named `stem`, or `stem`
  // with a random suffix when that name is taken; path() says which.
  static std::unique_ptr<TraceDirectoryWriter> create(const std::string &stem,
                                                      const TraceSchema &schema,
                                                      const sonde_trace_clock &clock,
                                                      std::string *error);
  ~TraceDirectoryWriter() override;

  void chunk(const RecordOrigin &origin, const char *data, uint32_t size) override;
  void lost(const RecordOrigin &origin, uint64_t count) override;
  void flush() override;
  // Writes what is staged and the index; false with the first write error.
  bool close(std::string *error) override;
  // After a write error nothing more is written (each file ends with its last
  // whole frame); the records of the frames not written are counted here.
  uint64_t recordsNotWritten() const override { return notWritten_; }

  // Bytes in the stream files: whole frames written.
  uint64_t bytesWritten() const;
  const std::string &path() const { return dir_; }

private:
  struct File {
    int fd = -1;
    std::string name;
    uint64_t bytes = 0; // whole frames written
    uint64_t pendingLost = 0;
  };
  TraceDirectoryWriter(int dirFd, std::string dir, const TraceSchema &schema)
      : dirFd_(dirFd), dir_(std::move(dir)), schema_(schema) {}
  static std::unique_ptr<TraceDirectoryWriter> start(int dirFd, const std::string &dir,
                                                     const TraceSchema &schema,
                                                     const sonde_trace_clock &clock,
                                                     std::string *error);
  File *fileFor(const RecordOrigin &origin);
  void frame(File &f, const char *data, uint32_t size);
  void writeStaged();
  void fail(File &f, size_t partial, const char *data, uint32_t size);

  transport::FileDescriptor dirFd_; // every file is created relative to it
  std::string dir_;
  const TraceSchema &schema_;      // frames' records are counted when they are not written
  std::map<uint64_t, File> files_; // by (pid << 32) | tid
  std::string error_;              // the first write error
  uint64_t notWritten_ = 0;
  uint64_t unattributedLost_ = 0; // losses of no known thread
  bool closed_ = false;
  // Small frames of one file waiting to be written together (the consumer
  // hands over a ring's frames one after another).
  std::vector<char> staged_;
  File *stagedFor_ = nullptr;
};

// Reading a trace directory back: its schema, clock and stream files.
struct TraceDirectory {
  std::optional<TraceSchema> schema;
  sonde_trace_clock clock{};
  struct Stream {
    std::string path;
    uint32_t pid = 0, tid = 0;
  };
  std::vector<Stream> streams; // sorted by (pid, tid)
  // From the index the recording wrote as it ended (`index`: each stream file
  // and its size, and these counts).
  uint64_t unattributedLost = 0; // records lost with no thread to name
  uint64_t notWritten = 0;       // records a write error kept from the stream files
  // Stream files the index lists that are missing or cut short, a damaged
  // index, or no stream file and no index: the trace is not whole. Each names
  // its file.
  std::vector<std::string> damage;
  // No index but stream files: the recording did not end normally.
  std::vector<std::string> warnings;

  // A missing or damaged schema or clock is an error naming the file (and
  // line); damage to the streams is listed in `damage`.
  static std::optional<TraceDirectory> open(const std::string &dir, std::string *error);

private:
  static void checkIndex(const std::string &dir, TraceDirectory &t);
};

// Events of every stream of a trace directory in timestamp order (ties in
// stream order) into `sink`; losses recorded in frames go to sink.lost().
// Returns false with a message naming the file and offset of a damaged frame
// (events before it are delivered; the other streams are read to the end).
bool replayTraceDirectory(const TraceDirectory &trace, RecordSink &sink,
                          const RecordStreams::Warn &warn, std::string *error);

} // namespace sonde::session
