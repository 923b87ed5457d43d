// The consumer's half of user stacks on record transports: a target sends the
// addresses of print_ubacktrace() & co. and the objects it has mapped; this
// sink symbolizes the addresses against those objects (per producer stream, so
// forked children and late dlopen()s resolve right, also after the target has
// gone) and hands the finished lines on as a text record.
//
// What a stream sends is checked first: an object list longer than a process
// can map, or a stack of more addresses than a handler sends, is damage (noted
// in corruption(), the record dropped), so that no stream can make the
// symbolizing cost without bound.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/symbols/LoadedObjects.h"
#include "runtime/values/CorruptionLatch.h"

#include <map>
#include <memory>
#include <vector>

namespace sonde::session {

class StackRecordSink final : public RecordSink {
public:
  // The most objects a process maps (vm.max_map_count's default, rounded up).
  static constexpr size_t kMaxObjects = 1 << 16;
  // `maxFrames`: the most addresses a stack record may list (MAXBACKTRACE, or
  // the words of a print_ustack() string).
  StackRecordSink(const TraceSchema &schema, std::unique_ptr<RecordSink> next,
                  size_t maxFrames = kMaxObjects)
      : schema_(schema), next_(std::move(next)), maxFrames_(maxFrames) {}

  void event(const TraceEvent &e) override;
  void lost(const RecordOrigin &origin, uint64_t count) override { next_->lost(origin, count); }
  void flush() override { next_->flush(); }
  bool close(std::string *error) override { return next_->close(error); }
  uint64_t recordsNotWritten() const override { return next_->recordsNotWritten(); }
  const values::CorruptionLatch &corruption() const { return corruption_; }

private:
  const TraceSchema &schema_;
  std::unique_ptr<RecordSink> next_;
  std::map<uint64_t, std::vector<symbols::LoadedObject>> objects_; // by stream
  size_t maxFrames_;
  values::CorruptionLatch corruption_;
};

} // namespace sonde::session
