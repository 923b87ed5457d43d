// One thread's output as binary records (relay and netlink transports): printf
// records and text records, encoded into the thread's producer. The record
// stream restarts (a full timestamp) at each new sub-buffer or message, so each
// one decodes on its own: after losses, in a flight-recorder dump, in a file.
#pragma once

#include "runtime/session/TraceSchema.h"
#include "runtime/transport/RecordCodec.h"
#include "runtime/transport/RelayProducer.h"

#include <memory>

namespace sonde::session {

// The transport a process's handler threads write records into.
struct RecordTransport {
  const transport::RelayChannel *relay = nullptr;
  const TraceSchema *schema = nullptr;
  sonde_trace_clock clock{}; // stamps records (its source is what matters here)
};

class RecordWriter {
public:
  explicit RecordWriter(const RecordTransport &transport);
  ~RecordWriter(); // flushes and frees the ring

  // False when the record was lost (the transport counts it).
  bool write(uint32_t id, const sonde_record_desc &desc, const SondeFormatArg *args) {
    size_t max = sonde_record_max_size(&desc, args);
    char *out = relay_->reserve(static_cast<uint32_t>(max));
    if (!out)
      return false;
    if (relay_->atBufferStart())
      sonde_record_stream_restart(&stream_);
    relay_->commit(static_cast<uint32_t>(
        sonde_record_encode(&stream_, id, sonde_trace_clock_read(&transport_.clock), &desc, args,
                            reinterpret_cast<uint8_t *>(out))));
    return true;
  }
  // Text as records of id TraceSchema::kTextId (`text` NUL-terminated).
  void writeText(const char *text);
  // Hands the partly filled buffer to the consumer now.
  void flush();
  // In a fork child: the buffer belongs to the parent's thread.
  void forgetAfterFork();

private:
  const RecordTransport &transport_;
  sonde_record_stream stream_{};
  std::unique_ptr<transport::RelayProducer> relay_;
};

} // namespace sonde::session
