#include "runtime/session/CtfRecordSink.h"

#include <algorithm>

namespace sonde::session {

using transport::CtfClock;
using transport::CtfField;
using transport::CtfFieldKind;
using transport::CtfValue;
using transport::CtfWriter;

namespace {

// Cycles are CLOCK_REALTIME ns since the epoch (offset 0), so readers show
// wall-clock times and traces of one machine line up.
const CtfClock kRealtimeClock{"realtime", 1000000000, 0, 0};

} // namespace

std::unique_ptr<CtfRecordSink> CtfRecordSink::open(const std::string &dir,
                                                   const TraceSchema &schema,
                                                   const sonde_trace_clock &clock,
                                                   std::string *error) {
  std::unique_ptr<CtfWriter> writer = CtfWriter::open(dir, "sonde", kRealtimeClock, error);
  if (!writer)
    return nullptr;
  return std::unique_ptr<CtfRecordSink>(new CtfRecordSink(std::move(writer), schema, clock));
}

CtfRecordSink::CtfRecordSink(std::unique_ptr<CtfWriter> writer, const TraceSchema &schema,
                             const sonde_trace_clock &clock)
    : writer_(std::move(writer)), schema_(schema), clock_(clock) {}

std::string CtfRecordSink::eventName(uint32_t id) const {
  if (id == TraceSchema::kTextId)
    return "text";
  const TraceEventType *type = schema_.type(id);
  if (!type || type->source.empty())
    return "printf_" + std::to_string(id);
  // Numbered by id among the formats of the same probe point, seen or not, so a
  // name does not depend on which events came first.
  uint32_t same = 1;
  for (uint32_t earlier = 0; earlier < id; ++earlier)
    if (schema_.type(earlier)->source == type->source)
      ++same;
  return same == 1 ? type->source : type->source + " #" + std::to_string(same);
}

bool CtfRecordSink::define(uint32_t id, const TraceEventType &type) {
  std::vector<CtfField> fields;
  for (size_t i = 0; i < type.kinds.size(); ++i)
    fields.push_back({type.fields[i], type.kinds[i] == SONDE_RECORD_ARG_STRING
                                          ? CtfFieldKind::String
                                          : CtfFieldKind::Signed64});
  if (!writer_->defineEvent(id, eventName(id), fields, &error_))
    return false;
  defined_.insert(id);
  return true;
}

void CtfRecordSink::event(const TraceEvent &e) {
  if (!error_.empty()) {
    ++dropped_;
    return;
  }
  const TraceEventType &type = *e.type;
  if (!defined_.count(e.id) && !define(e.id, type)) {
    fail();
    return;
  }
  values_.clear();
  for (size_t i = 0; i < type.kinds.size(); ++i) {
    if (type.kinds[i] == SONDE_RECORD_ARG_STRING)
      values_.emplace_back(e.args[i].s ? e.args[i].s : "");
    else // longs, and record times (decoded as realtime ns)
      values_.emplace_back(e.args[i].i);
  }
  // Readers reject a stream going back in time: a reading before the stream's
  // last (a thread moved to a CPU whose TSC lags) or before the epoch keeps the
  // stream's last time instead.
  int64_t ns = sonde_trace_clock_to_realtime_ns(&clock_, e.reading);
  StreamState &stream = streams_[e.origin.stream];
  if (!stream.named || stream.pid != e.origin.pid || stream.tid != e.origin.tid) {
    if (!writer_->setStreamThread(e.origin.stream, static_cast<int32_t>(e.origin.pid),
                                  static_cast<int32_t>(e.origin.tid), &error_)) {
      fail();
      return;
    }
    stream = {stream.lastTimestamp, e.origin.pid, e.origin.tid, true};
  }
  stream.lastTimestamp =
      std::max(stream.lastTimestamp, static_cast<uint64_t>(std::max<int64_t>(ns, 0)));
  if (!writer_->write(e.origin.stream, stream.lastTimestamp, e.id, values_, &error_))
    fail();
}

void CtfRecordSink::lost(const RecordOrigin &origin, uint64_t count) {
  if (error_.empty() && !writer_->discarded(origin.stream, count, &error_) && error_.empty())
    error_ = "CTF trace write failed";
}

// error_ holds the writer's reason; this event and later ones are dropped
// (counted), close() reports it.
void CtfRecordSink::fail() {
  ++dropped_;
  if (error_.empty())
    error_ = "CTF trace write failed";
}

bool CtfRecordSink::close(std::string *error) {
  std::string closeError;
  bool closed = writer_->close(&closeError);
  if (!error_.empty()) {
    *error = error_;
    return false;
  }
  if (!closed)
    *error = closeError;
  return closed;
}

uint64_t CtfRecordSink::recordsNotWritten() const { return dropped_ + writer_->eventsNotWritten(); }

} // namespace sonde::session
