#include "runtime/session/RecordMerger.h"

#include <queue>

namespace sonde::session {

namespace {

// One stream being merged: its next event decoded, ready to compare.
class StreamCursor {
public:
  StreamCursor(MergedStream &stream, const TraceSchema &schema, const sonde_trace_clock &clock)
      : stream_(stream), schema_(schema), args_(1024) {
    decoder_ = {{}, &clock, schema.table(), schema.tableSize()};
  }

  // Decodes the next event into event(); false at the end (or on damage: error()).
  bool advance(RecordSink &sink, const RecordStreams::Warn &warn) {
    for (;;) {
      while (at_ >= frame_.bytes.size()) {
        if (!stream_.frames->next(frame_, &error_))
          return false;
        at_ = 0;
        if (frame_.lostBefore > 0)
          sink.lost(stream_.origin, frame_.lostBefore);
      }
      sonde_decoded_record rec{};
      scratch_.resize(frame_.bytes.size() + args_.size());
      int status = sonde_record_decode(&decoder_,
                                       reinterpret_cast<const uint8_t *>(frame_.bytes.data()) + at_,
                                       frame_.bytes.size() - at_, args_.data(), args_.size(),
                                       scratch_.data(), scratch_.size(), &rec);
      if (status == SONDE_RECORD_CLOCK) {
        at_ += rec.size;
        continue;
      }
      const TraceEventType *type = status == SONDE_RECORD_EVENT ? schema_.type(rec.id) : nullptr;
      if (!type) {
        warn(stream_.frames->where() + ": " + recordStatusText(status) +
             "; skipping the rest of that frame");
        at_ = frame_.bytes.size();
        continue;
      }
      at_ += rec.size;
      event_ = TraceEvent{stream_.origin, rec.reading, rec.id, type, args_.data()};
      return true;
    }
  }
  const TraceEvent &event() const { return event_; }
  const std::string &error() const { return error_; }

private:
  MergedStream &stream_;
  const TraceSchema &schema_;
  sonde_record_decoder decoder_{};
  RecordFrame frame_;
  size_t at_ = 0;
  std::vector<SondeFormatArg> args_;
  std::vector<char> scratch_;
  TraceEvent event_;
  std::string error_;
};

} // namespace

bool MemoryFrames::next(RecordFrame &frame, std::string *) {
  if (next_ >= frames_.size())
    return false;
  frame = std::move(frames_[next_++]);
  return true;
}

bool mergeRecordStreams(std::vector<MergedStream> &streams, const TraceSchema &schema,
                        const sonde_trace_clock &clock, RecordSink &sink,
                        const RecordStreams::Warn &warn, std::string *error) {
  std::vector<std::unique_ptr<StreamCursor>> cursors;
  for (MergedStream &s : streams)
    cursors.push_back(std::make_unique<StreamCursor>(s, schema, clock));
  // Earliest event first; equal times keep stream order.
  auto later = [&](size_t a, size_t b) {
    const TraceEvent &x = cursors[a]->event(), &y = cursors[b]->event();
    return x.reading != y.reading ? x.reading > y.reading : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> next(later);
  for (size_t i = 0; i < cursors.size(); ++i)
    if (cursors[i]->advance(sink, warn))
      next.push(i);
  while (!next.empty()) {
    size_t i = next.top();
    next.pop();
    sink.event(cursors[i]->event());
    if (cursors[i]->advance(sink, warn))
      next.push(i);
  }
  std::string first;
  for (const auto &c : cursors)
    if (!c->error().empty()) {
      if (first.empty())
        first = c->error();
      else
        warn(c->error());
    }
  if (!first.empty())
    *error = first;
  return first.empty();
}

} // namespace sonde::session
