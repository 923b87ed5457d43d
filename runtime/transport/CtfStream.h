// One CTF data stream (one producer: a thread or a CPU) written to its own file
// as fixed-size packets, each opened by the packet header and context that
// CtfMetadata.cpp declares.
#pragma once

#include "runtime/transport/CtfMetadata.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::transport {

// One field's value in an event; strings end at their first NUL, as CTF's do.
struct CtfValue {
  CtfValue(int64_t value) : kind(CtfFieldKind::Signed64), number(value) {}
  CtfValue(std::string_view value) : kind(CtfFieldKind::String), text(value) {}
  CtfValue(const char *value) : CtfValue(std::string_view(value)) {}
  CtfValue(const std::string &value) : CtfValue(std::string_view(value)) {}

  CtfFieldKind kind;
  int64_t number = 0;
  std::string_view text;
};

class CtfStream {
public:
  // Packets of this size, unless one event needs more (then a multiple of it).
  static constexpr size_t kPacketSize = 64 * 1024;

  // Takes ownership of `fd`, an empty file; `path` names it in messages.
  CtfStream(int fd, std::string path, const CtfUuid &uuid, uint64_t instanceId);
  ~CtfStream();
  CtfStream(const CtfStream &) = delete;
  CtfStream &operator=(const CtfStream &) = delete;

  // Appends an event (values already checked against its class). Timestamps must
  // not go backwards within a stream: readers reject such a trace.
  bool write(uint64_t timestamp, uint32_t eventId, std::span<const CtfValue> values,
             std::string *error);
  // The process and thread whose events this stream holds: every later event
  // carries them as its context (vpid, vtid). 0 until set.
  void setThread(int32_t pid, int32_t tid) {
    pid_ = pid;
    tid_ = tid;
  }
  // Counts events the producer lost; the next packet written reports the total.
  void addDiscarded(uint64_t count) { discarded_ += count; }
  // Writes the open packet if it holds events or an unreported loss.
  bool finish(std::string *error);
  // Events of packets a write error kept from the file. The file then ends
  // with its last whole packet, so readers still take what it holds.
  uint64_t eventsNotWritten() const { return eventsNotWritten_; }

private:
  bool flush(std::string *error);
  // Fills the packet header and context; events end `content` bytes in.
  void fillHeader(std::vector<uint8_t> &packet, size_t content, uint64_t begin, uint64_t end,
                  uint64_t discarded);
  // Appends a whole packet to the file and counts it.
  bool writeOut(const std::vector<uint8_t> &packet, std::string *error);
  void put(const void *data, size_t size);

  int fd_;
  std::string path_;
  CtfUuid uuid_;
  uint64_t instanceId_;
  std::vector<uint8_t> packet_;
  size_t used_;
  uint64_t firstTimestamp_ = 0;
  uint64_t lastTimestamp_ = 0;
  uint64_t events_ = 0; // in the open packet
  uint64_t discarded_ = 0;
  uint64_t discardedReported_ = 0;
  uint64_t sequence_ = 0;
  uint64_t fileBytes_ = 0; // whole packets written
  uint64_t eventsNotWritten_ = 0;
  int32_t pid_ = 0;
  int32_t tid_ = 0;
};

} // namespace sonde::transport
