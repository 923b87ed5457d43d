// print/println/printd/printdln and their sprint forms. stap turns them into a
// synthesized "%d<delim>%s...\n" format; writing the values directly gives the
// same bytes without a format to parse.
#include "runtime/format/Conversions.h"
#include "runtime/format/FormatAbi.h"
#include "runtime/format/TextWriter.h"

using namespace sonde::rt;

namespace {

void printValues(TextWriter &w, const SondeValue *values, size_t count, const char *delimiter,
                 int newline) {
  for (size_t k = 0; k < count; ++k) {
    if (k > 0 && delimiter != nullptr)
      w.write(delimiter);
    if (values[k].kind == SONDE_VALUE_STRING)
      writeString(w, values[k].s, -1, -1, 0);
    else
      writeDecimal(w, values[k].i);
  }
  if (newline)
    w.put('\n');
}

} // namespace

extern "C" size_t sonde_print_values(const SondeValue *values, size_t count, const char *delimiter,
                                     int newline, char *out, size_t cap) {
  TextWriter w(out, cap);
  printValues(w, values, count, delimiter, newline);
  return w.size();
}

extern "C" size_t sonde_sprint_values(const SondeValue *values, size_t count, const char *delimiter,
                                      int newline, char *out, size_t cap) {
  TextWriter w(out, cap);
  printValues(w, values, count, delimiter, newline);
  return w.terminate();
}
