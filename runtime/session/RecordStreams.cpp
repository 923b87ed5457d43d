#include "runtime/session/RecordStreams.h"

namespace sonde::session {

namespace {
// The most arguments a format takes: kinds per format are bounded by its text.
constexpr size_t kMaxArgs = 1024;
} // namespace

const char *recordStatusText(int status) {
  switch (status) {
  case SONDE_RECORD_TRUNCATED: return "a record is cut short";
  case SONDE_RECORD_UNKNOWN_ID: return "a record has an unknown format id";
  case SONDE_RECORD_MALFORMED: return "a record is malformed";
  case SONDE_RECORD_NO_ROOM: return "a record has too many arguments";
  default: return "a record does not decode";
  }
}

RecordStreams::RecordStreams(const TraceSchema &schema, const sonde_trace_clock &clock,
                             RecordSink &sink, Warn warn)
    : schema_(schema), clock_(clock), sink_(sink), warn_(std::move(warn)), args_(kMaxArgs) {}

void RecordStreams::chunk(const RecordOrigin &origin, const char *data, uint32_t size) {
  auto [it, fresh] = decoders_.try_emplace(origin.stream);
  sonde_record_decoder &decoder = it->second;
  if (fresh)
    decoder = {{}, &clock_, schema_.table(), schema_.tableSize()};
  if (scratch_.size() < size + args_.size())
    scratch_.resize(size + args_.size());
  const auto *in = reinterpret_cast<const uint8_t *>(data);
  for (uint32_t at = 0; at < size;) {
    sonde_decoded_record rec{};
    int status = sonde_record_decode(&decoder, in + at, size - at, args_.data(), args_.size(),
                                     scratch_.data(), scratch_.size(), &rec);
    if (status == SONDE_RECORD_CLOCK) {
      at += rec.size;
      continue;
    }
    const TraceEventType *type = status == SONDE_RECORD_EVENT ? schema_.type(rec.id) : nullptr;
    if (!type && status == SONDE_RECORD_EVENT)
      status = SONDE_RECORD_UNKNOWN_ID; // an id the table has, but no format of the script
    if (!type) {
      // The rest of the chunk cannot be framed: skip it, and say so once per
      // stream. Producers write only whole records of known formats, so the
      // ring or message was written over: the session ends on it.
      ++malformed_;
      corruption_.note("the records of pid " + std::to_string(origin.pid) + " tid " +
                       std::to_string(origin.tid) + " (stream " + std::to_string(origin.stream) +
                       "): " + recordStatusText(status) + ", at byte " + std::to_string(at) +
                       " of " + std::to_string(size) + " handed over");
      if (warned_.insert(origin.stream).second)
        warn_(std::string(recordStatusText(status)) + " in the stream of pid " +
              std::to_string(origin.pid) + " tid " + std::to_string(origin.tid) +
              "; skipping the rest of its chunk");
      return;
    }
    at += rec.size;
    ++events_;
    sink_.event(TraceEvent{origin, rec.reading, rec.id, type, args_.data()});
  }
}

uint64_t countRecords(const TraceSchema &schema, const char *data, uint32_t size) {
  const sonde_trace_clock clock{}; // times are not needed
  sonde_record_decoder decoder{{}, &clock, schema.table(), schema.tableSize()};
  decoder.stream.started = 1; // a chunk may go on from an earlier one's time
  std::vector<SondeFormatArg> args(kMaxArgs);
  std::vector<char> scratch(size + kMaxArgs);
  const auto *in = reinterpret_cast<const uint8_t *>(data);
  uint64_t records = 0;
  for (uint32_t at = 0; at < size;) {
    sonde_decoded_record rec{};
    int status = sonde_record_decode(&decoder, in + at, size - at, args.data(), args.size(),
                                     scratch.data(), scratch.size(), &rec);
    if (status != SONDE_RECORD_EVENT && status != SONDE_RECORD_CLOCK)
      break;
    records += status == SONDE_RECORD_EVENT;
    at += rec.size;
  }
  return records;
}

} // namespace sonde::session
