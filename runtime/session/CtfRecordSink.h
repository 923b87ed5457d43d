// Records as a CTF 1.8 trace directory (`--format=ctf -o DIR`) for babeltrace2
// and Trace Compass: one event class per printf format seen, named after its
// probe point, plus "text" for text records; one stream per producer stream;
// timestamps in CLOCK_REALTIME nanoseconds.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/transport/CtfWriter.h"
#include "runtime/transport/TraceClock.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sonde::session {

class CtfRecordSink final : public RecordSink {
public:
  // Creates the trace in `dir` (new, or empty). `schema` must outlive the sink;
  // `clock` is copied (pass it calibrated).
  static std::unique_ptr<CtfRecordSink> open(const std::string &dir, const TraceSchema &schema,
                                             const sonde_trace_clock &clock, std::string *error);

  void event(const TraceEvent &e) override;
  void lost(const RecordOrigin &origin, uint64_t count) override;
  // After the first failure nothing more is written; close() reports it.
  bool close(std::string *error) override;
  uint64_t recordsNotWritten() const override;

  // The event class name of record id `id`: the format's probe point, with
  // " #2", " #3"... for a probe point's later formats, "printf_<id>" without
  // one, "text" for text records.
  std::string eventName(uint32_t id) const;

private:
  CtfRecordSink(std::unique_ptr<transport::CtfWriter> writer, const TraceSchema &schema,
                const sonde_trace_clock &clock);
  bool define(uint32_t id, const TraceEventType &type);
  void fail();

  std::unique_ptr<transport::CtfWriter> writer_;
  const TraceSchema &schema_;
  sonde_trace_clock clock_;
  std::unordered_set<uint32_t> defined_;
  // Per stream: its last timestamp, and the thread writing it now (a relay
  // ring passes to another thread when its thread ends).
  struct StreamState {
    uint64_t lastTimestamp = 0;
    uint32_t pid = 0, tid = 0;
    bool named = false;
  };
  std::unordered_map<uint64_t, StreamState> streams_;
  std::vector<transport::CtfValue> values_;
  std::string error_;    // the first failure
  uint64_t dropped_ = 0; // events not handed to the writer because of it
};

} // namespace sonde::session
