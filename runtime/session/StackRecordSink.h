// The consumer's half of user stacks on record transports: a target sends the
// addresses of print_ubacktrace() & co. and the objects it has mapped; this
// sink symbolizes the addresses against those objects (per producer stream, so
// forked children and late dlopen()s resolve right, also after the target has
// gone) and hands the finished lines on as a text record.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/symbols/LoadedObjects.h"

#include <map>
#include <memory>
#include <vector>

namespace sonde::session {

class StackRecordSink final : public RecordSink {
public:
  StackRecordSink(const TraceSchema &schema, std::unique_ptr<RecordSink> next)
      : schema_(schema), next_(std::move(next)) {}

  void event(const TraceEvent &e) override;
  void lost(const RecordOrigin &origin, uint64_t count) override { next_->lost(origin, count); }
  void flush() override { next_->flush(); }
  bool close(std::string *error) override { return next_->close(error); }
  uint64_t recordsNotWritten() const override { return next_->recordsNotWritten(); }

private:
  const TraceSchema &schema_;
  std::unique_ptr<RecordSink> next_;
  std::map<uint64_t, std::vector<symbols::LoadedObject>> objects_; // by stream
};

} // namespace sonde::session
