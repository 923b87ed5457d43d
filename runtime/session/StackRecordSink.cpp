#include "runtime/session/StackRecordSink.h"

#include "runtime/session/TraceSchema.h"
#include "runtime/symbols/AddressSymbol.h"
#include "runtime/symbols/ProcessSymbols.h"

namespace sonde::session {

void StackRecordSink::event(const TraceEvent &e) {
  if (e.id == TraceSchema::kObjectsId) {
    objects_[e.origin.stream] = symbols::parseObjects(e.args[0].s);
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
