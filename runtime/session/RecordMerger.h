// Records of several producer streams delivered to a RecordSink in timestamp
// order across streams (ties in stream order), each stream in its own order.
// `sonde report` replays a binary trace's files with it; flight-recorder dumps
// merge the rings' recent sub-buffers with it.
#pragma once

#include "runtime/session/RecordStreams.h"

#include <memory>
#include <string>
#include <vector>

namespace sonde::session {

// Whole records, as a producer wrote them, and the records it lost before them.
struct RecordFrame {
  std::vector<char> bytes;
  uint64_t lostBefore = 0;
};

// A stream's frames, one after another.
class FrameSource {
public:
  virtual ~FrameSource() = default;
  // The next frame; false at the end, or on damage (with *error set).
  virtual bool next(RecordFrame &frame, std::string *error) = 0;
  // Where the last frame came from, for warnings ("FILE, frame at offset N").
  virtual std::string where() const = 0;
};

struct MergedStream {
  RecordOrigin origin;
  std::unique_ptr<FrameSource> frames;
};

// Returns false with the first damaged stream's error (the others are read to
// their end; their errors go to `warn`). Records that do not decode are skipped
// to the end of their frame, with a warning.
bool mergeRecordStreams(std::vector<MergedStream> &streams, const TraceSchema &schema,
                        const sonde_trace_clock &clock, RecordSink &sink,
                        const RecordStreams::Warn &warn, std::string *error);

// Frames held in memory (a flight-recorder dump): one per chunk.
class MemoryFrames final : public FrameSource {
public:
  explicit MemoryFrames(std::string name) : name_(std::move(name)) {}
  void add(const char *data, uint32_t size) { frames_.push_back({{data, data + size}, 0}); }
  bool next(RecordFrame &frame, std::string *) override;
  std::string where() const override { return name_ + ", chunk " + std::to_string(next_); }

private:
  std::string name_;
  std::vector<RecordFrame> frames_;
  size_t next_ = 0;
};

} // namespace sonde::session
