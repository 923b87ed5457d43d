// Decoded records as a CTF 1.8 trace directory for babeltrace2 and Trace Compass:
// `metadata` (TSDL) plus one `stream_<id>` file per producer.
// Consumer-side only; not thread-safe (one draining thread writes).
#pragma once

#include "runtime/transport/CtfMetadata.h"
#include "runtime/transport/CtfStream.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace sonde::transport {

class CtfWriter {
public:
  // Creates `dir` (or takes it if empty) and writes the metadata. On failure
  // returns null with a one-line reason.
  static std::unique_ptr<CtfWriter> open(const std::string &dir, const std::string &traceName,
                                         const CtfClock &clock, std::string *error);
  ~CtfWriter(); // closes, ignoring errors
  CtfWriter(const CtfWriter &) = delete;
  CtfWriter &operator=(const CtfWriter &) = delete;

  // Declares an event class (one per record format) before events of it are
  // written; rewrites the metadata file.
  bool defineEvent(uint32_t id, const std::string &name, const std::vector<CtfField> &fields,
                   std::string *error);
  // Appends an event to producer `streamId`'s stream; `timestamp` counts clock
  // cycles and must not go backwards within a stream.
  bool write(uint64_t streamId, uint64_t timestamp, uint32_t eventId,
             std::span<const CtfValue> values, std::string *error);
  // Names the process and thread of producer `streamId`'s events (their
  // vpid/vtid context; 0 until named).
  bool setStreamThread(uint64_t streamId, int32_t pid, int32_t tid, std::string *error);
  // Records that producer `streamId` lost `count` more events; readers report
  // them where the next packet of that stream ends.
  bool discarded(uint64_t streamId, uint64_t count, std::string *error);
  // Writes every stream's last packet and closes the files.
  bool close(std::string *error);
  // Events of packets a write error kept from the stream files (each file
  // ends with its last whole packet).
  uint64_t eventsNotWritten() const;

private:
  CtfWriter(int dirFd, std::string dir, CtfTraceDescription trace);
  bool writeMetadata(std::string *error);
  CtfStream *stream(uint64_t streamId, std::string *error);

  int dirFd_;
  std::string dir_; // for messages
  CtfTraceDescription trace_;
  std::unordered_map<uint32_t, size_t> eventIndex_; // into trace_.events
  std::unordered_map<uint64_t, std::unique_ptr<CtfStream>> streams_;
  uint64_t closedNotWritten_ = 0; // eventsNotWritten() of closed streams
};

} // namespace sonde::transport
