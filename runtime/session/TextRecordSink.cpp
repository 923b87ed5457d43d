#include "runtime/session/TextRecordSink.h"

#include <cstring>

namespace sonde::session {

void TextRecordSink::event(const TraceEvent &e) {
  std::string &text = pending_.text();
  if (e.id == TraceSchema::kTextId) {
    text.append(e.args[0].s, std::strlen(e.args[0].s));
  } else {
    // Formats that read memory never travel as records, so this cannot fail.
    SondeFormatError err{};
    text.append(formatted_, sonde_format_print(&e.type->spec, e.args, formatted_, sizeof formatted_,
                                               nullptr, &err));
  }
  pending_.endRecord();
}

} // namespace sonde::session
