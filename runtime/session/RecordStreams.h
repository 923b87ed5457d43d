// Chunks of binary records (a relay sub-buffer's committed bytes, a netlink
// message, a frame of a recorded stream file) decoded into events for a
// RecordSink. Each producer stream keeps its decoder state (the last timestamp)
// across its chunks. A chunk that does not decode is skipped, counted,
// reported once per stream and noted as damage (corruption()), for the session
// to end on: never a crash, never a hang.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/session/TraceSchema.h"
#include "runtime/values/CorruptionLatch.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sonde::session {

// Where chunks go: decoded (RecordStreams) or stored as they are (a trace directory).
class ChunkSink {
public:
  virtual ~ChunkSink() = default;
  // Whole records of the stream `origin.stream`, back to back, in its order.
  virtual void chunk(const RecordOrigin &origin, const char *data, uint32_t size) = 0;
  // `count` records of the stream were lost (transport counters) since the last call.
  virtual void lost(const RecordOrigin &origin, uint64_t count) = 0;
  // A drain round ended.
  virtual void flush() = 0;
  virtual bool close(std::string *error) = 0;
  // Records of the chunks handed over that a write error kept from the output.
  virtual uint64_t recordsNotWritten() const = 0;
};

class RecordStreams final : public ChunkSink {
public:
  using Warn = std::function<void(const std::string &)>;
  RecordStreams(const TraceSchema &schema, const sonde_trace_clock &clock, RecordSink &sink,
                Warn warn);

  void chunk(const RecordOrigin &origin, const char *data, uint32_t size) override;
  void lost(const RecordOrigin &origin, uint64_t count) override { sink_.lost(origin, count); }
  void flush() override { sink_.flush(); }
  bool close(std::string *error) override { return sink_.close(error); }
  uint64_t recordsNotWritten() const override { return sink_.recordsNotWritten(); }

  uint64_t events() const { return events_; }
  // Chunks (or their rest) skipped because they did not decode.
  uint64_t malformed() const { return malformed_; }
  // The first record that did not decode: damage of what a producer wrote.
  const values::CorruptionLatch &corruption() const { return corruption_; }

private:
  const TraceSchema &schema_;
  const sonde_trace_clock &clock_;
  RecordSink &sink_;
  Warn warn_;
  std::unordered_map<uint64_t, sonde_record_decoder> decoders_;
  std::unordered_set<uint64_t> warned_;
  std::vector<SondeFormatArg> args_;
  std::vector<char> scratch_;
  uint64_t events_ = 0, malformed_ = 0;
  values::CorruptionLatch corruption_;
};

// The records in `size` bytes of whole records (a chunk, or the part of one
// that decodes), for counting what a write error kept from the output.
uint64_t countRecords(const TraceSchema &schema, const char *data, uint32_t size);

// What a decode status means, for messages.
const char *recordStatusText(int status);

} // namespace sonde::session
