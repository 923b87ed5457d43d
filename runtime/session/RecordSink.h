// Where decoded records go in sonde: text output, a CTF trace, JSON lines. The
// drains (live transports) and `sonde report` (a recorded trace) decode records
// with RecordStreams and hand each event here, in each stream's order.
#pragma once

#include "runtime/format/FormatAbi.h"
#include "runtime/session/TraceSchema.h"

#include <cstdint>
#include <string>

namespace sonde::session {

// Who wrote a run of records: one producer thread's stream.
struct RecordOrigin {
  uint64_t stream = 0; // unique per producer stream in a session
  uint32_t pid = 0;
  uint32_t tid = 0;
};

struct TraceEvent {
  RecordOrigin origin;
  uint64_t reading = 0; // trace clock reading
  uint32_t id = 0;      // format id, or TraceSchema::kTextId
  const TraceEventType *type = nullptr;
  const SondeFormatArg *args = nullptr; // type->kinds.size() of them
};

class RecordSink {
public:
  virtual ~RecordSink() = default;
  virtual void event(const TraceEvent &e) = 0;
  // `count` records of this stream were lost before its next event.
  virtual void lost(const RecordOrigin &, uint64_t) {}
  // A batch of events ended (a drain round): buffered output may go out now.
  virtual void flush() {}
  // The last call: everything written. False (with a reason) on a write error.
  virtual bool close(std::string *error) = 0;
  // Events handed over that a write error kept from the output (lost, and
  // counted as such in the transport summary).
  virtual uint64_t recordsNotWritten() const { return 0; }
};

} // namespace sonde::session
