// Records as JSON lines (`--format=json`): one object per event, text record or
// loss, so a script's output can be read by jq or a program. Strings are escaped
// so every line is valid JSON and valid UTF-8, whatever bytes the target sent.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/session/RecordTextBuffer.h"
#include "runtime/transport/TraceClock.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace sonde::session {

class JsonRecordSink final : public RecordSink {
public:
  // Whole lines go to `write`, in pieces of about RecordTextBuffer::kFlushSize
  // bytes; it returns the bytes it wrote. `clock` is copied: pass it calibrated.
  using Write = RecordTextBuffer::Write;

  JsonRecordSink(const sonde_trace_clock &clock, Write write)
      : clock_(clock), pending_(std::move(write)) {}

  // {"time_ns":..,"pid":..,"tid":..,"probe":..,"format":..,"fields":{..}}, or
  // {"time_ns":..,"pid":..,"tid":..,"text":..} for a text record.
  void event(const TraceEvent &e) override;
  // {"lost":N,"pid":..,"tid":..}
  void lost(const RecordOrigin &origin, uint64_t count) override;
  void flush() override { pending_.flush(); }
  // Write errors are the writer's to report (OutputSink::failure()).
  bool close(std::string *error) override;
  uint64_t recordsNotWritten() const override { return pending_.recordsNotWritten(); }

private:
  sonde_trace_clock clock_;
  RecordTextBuffer pending_;
};

// `text` as a JSON string literal, quotes included: '"', '\\' and control
// characters escaped, and each byte that is not part of valid UTF-8 written as
// \u00XX of its value.
void appendJsonString(std::string &out, std::string_view text);

} // namespace sonde::session
