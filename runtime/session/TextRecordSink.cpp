#include "runtime/session/TextRecordSink.h"

#include <cstring>

namespace sonde::session {

void TextRecordSink::event(const TraceEvent &e) {
  if (e.id == TraceSchema::kTextId) {
    pending_.append(e.args[0].s, std::strlen(e.args[0].s), output_);
    return;
  }
  // Formats that read memory never travel as records, so this cannot fail.
  SondeFormatError err{};
  char *out = pending_.reserve(SONDE_PRINT_BUFFER_SIZE, output_);
  pending_.commit(
      sonde_format_print(&e.type->spec, e.args, out, SONDE_PRINT_BUFFER_SIZE, nullptr, &err));
}

} // namespace sonde::session
