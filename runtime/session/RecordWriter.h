// One thread's output as binary records (relay and netlink transports): printf
// records and text records, encoded into the thread's producer. The record
// stream restarts (a full timestamp) at each new sub-buffer or message, so each
// one decodes on its own: after losses, in a flight-recorder dump, in a file.
#pragma once

#include "runtime/session/TraceSchema.h"
#include "runtime/transport/NetlinkProducer.h"
#include "runtime/transport/RecordCodec.h"
#include "runtime/transport/RelayProducer.h"

#include <memory>

namespace sonde::session {

// The transport a process's handler threads write records into: one of the two.
struct RecordTransport {
  const transport::RelayChannel *relay = nullptr;
  const transport::NetlinkChannel *netlink = nullptr;
  const TraceSchema *schema = nullptr;
  sonde_trace_clock clock{}; // stamps records (its source is what matters here)
};

class RecordWriter {
public:
  explicit RecordWriter(const RecordTransport &transport);
  ~RecordWriter(); // flushes and frees the ring

  // False when the record was lost (the transport counts it).
  bool write(uint32_t id, const sonde_record_desc &desc, const SondeFormatArg *args) {
    return relay_ ? writeTo(*relay_, id, desc, args) : writeTo(*netlink_, id, desc, args);
  }
  // Text as records of id TraceSchema::kTextId (`text` NUL-terminated).
  void writeText(const char *text);
  // Hands the partly filled buffer to the consumer now.
  void flush();
  // What a quiet thread does so its records are not held back: netlink sends
  // its batch; relay needs nothing (the consumer reads open sub-buffers).
  void sendBatch() {
    if (netlink_)
      netlink_->flush();
  }
  // In a fork child: the buffer belongs to the parent's thread.
  void forgetAfterFork();
  // Where generated code appends printf records inline (RecordCursor.h), or
  // null: netlink, or a trace clock other than the TSC.
  sonde_record_cursor *inlineCursor() { return inlineCursor_; }

private:
  template <class Producer>
  bool writeTo(Producer &p, uint32_t id, const sonde_record_desc &desc,
               const SondeFormatArg *args) {
    size_t max = transport_.schema->fixedMaxSize(id);
    if (max == 0)
      max = sonde_record_max_size(&desc, args);
    char *out = p.reserve(static_cast<uint32_t>(max));
    if (!out)
      return false;
    if (p.atBufferStart())
      sonde_record_stream_restart(stream_);
    p.commit(static_cast<uint32_t>(
        sonde_record_encode(stream_, id, sonde_trace_clock_read(&transport_.clock), &desc, args,
                            reinterpret_cast<uint8_t *>(out))));
    return true;
  }

  const RecordTransport &transport_;
  // The time state of the records written: the relay cursor's, which inline
  // appends share, or ownStream_.
  sonde_record_stream *stream_ = &ownStream_;
  sonde_record_stream ownStream_{};
  sonde_record_cursor *inlineCursor_ = nullptr;
  std::unique_ptr<transport::RelayProducer> relay_;     // or
  std::unique_ptr<transport::NetlinkProducer> netlink_; // the other
};

} // namespace sonde::session
