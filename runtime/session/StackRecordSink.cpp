#include "runtime/session/StackRecordSink.h"

#include "runtime/session/TraceSchema.h"
#include "runtime/symbols/AddressSymbol.h"
#include "runtime/symbols/ProcessSymbols.h"

#include <string>

namespace sonde::session {

namespace {

std::string streamName(const RecordOrigin &o) {
  return "the records of pid " + std::to_string(o.pid) + " tid " + std::to_string(o.tid) +
         " (stream " + std::to_string(o.stream) + ")";
}

} // namespace

void StackRecordSink::event(const TraceEvent &e) {
  if (e.id == TraceSchema::kObjectsId) {
    std::vector<symbols::LoadedObject> objects = symbols::parseObjects(e.args[0].s);
    if (objects.size() > kMaxObjects) {
      corruption_.note(streamName(e.origin) + ": an object list names " +
                       std::to_string(objects.size()) + " objects, more than a process maps");
      return;
    }
    objects_[e.origin.stream] = std::move(objects);
    return;
  }
  if (e.id != TraceSchema::kUserStackId) {
    next_->event(e);
    return;
  }
  auto style = static_cast<symbols::SymbolStyle>(e.args[0].i);
  if (e.args[0].i < static_cast<int64_t>(symbols::SymbolStyle::Full) ||
      e.args[0].i > static_cast<int64_t>(symbols::SymbolStyle::Saved))
    style = symbols::SymbolStyle::Full;
  size_t frames = 0;
  for (const char *p = e.args[1].s; *p; ++p)
    frames += *p != ' ' && (p[1] == ' ' || p[1] == '\0');
  if (frames > maxFrames_) {
    corruption_.note(streamName(e.origin) + ": a stack lists " + std::to_string(frames) +
                     " addresses, more than the " + std::to_string(maxFrames_) +
                     " a handler sends");
    return;
  }
  // A stream whose object list was lost still prints its addresses.
  const std::vector<symbols::LoadedObject> &objects = objects_[e.origin.stream];
  std::string text = symbols::formatStack(e.args[1].s, style, 0, [&](uint64_t address) {
    return symbols::resolveIn(objects, address);
  });
  SondeFormatArg arg{};
  arg.s = text.c_str();
  TraceEvent out = e;
  out.id = TraceSchema::kTextId;
  out.type = schema_.type(TraceSchema::kTextId);
  out.args = &arg;
  next_->event(out);
}

} // namespace sonde::session
