// The text of runtime errors and of the closing lines of a failed run
// (language.md §7, §9); the caller decides where the text goes.
#include "runtime/format/Conversions.h"
#include "runtime/format/FormatAbi.h"
#include "runtime/format/TextWriter.h"

#include <cstring>

using namespace sonde::rt;

namespace {

bool isEmpty(const char *s) { return s == nullptr || s[0] == '\0'; }

void writeUnsigned(TextWriter &w, uint64_t v) { writeNumber(w, v, 10, -1, -1, 0); }

size_t writeLine(char *out, size_t cap, const char *line) {
  TextWriter w(out, cap);
  w.write(line);
  return w.size();
}

} // namespace

extern "C" size_t sonde_error_token(const char *kind, const char *text, const char *file,
                                    uint32_t line, uint32_t column, char *out, size_t cap) {
  TextWriter w(out, cap);
  w.write(kind);
  if (std::strcmp(kind, "keyword") != 0) { // keywords are named by their kind alone
    w.write(" '");
    w.write(text != nullptr ? text : "");
    w.put('\'');
  }
  w.write(" at ");
  w.write(file != nullptr ? file : "");
  w.put(':');
  writeUnsigned(w, line);
  w.put(':');
  writeUnsigned(w, column);
  return w.size();
}

extern "C" size_t sonde_error_line(const char *message, const char *near,
                                   const char *const *called_from, size_t called_from_count,
                                   const char *probe_point, char *out, size_t cap) {
  TextWriter w(out, cap);
  w.write("ERROR: ");
  w.write(message != nullptr ? message : "");
  if (!isEmpty(near)) {
    w.write(" near ");
    w.write(near);
  }
  for (size_t k = 0; k < called_from_count; ++k) {
    w.write(" (called from ");
    w.write(called_from[k]);
    w.put(')');
  }
  if (!isEmpty(probe_point)) {
    w.write(" in probe ");
    w.write(probe_point);
  }
  w.put('\n');
  return w.size();
}

extern "C" size_t sonde_error_run_summary(uint64_t errors, uint64_t skipped, char *out,
                                          size_t cap) {
  TextWriter w(out, cap);
  if (errors == 0 && skipped == 0)
    return 0;
  w.write("WARNING: Number of errors: ");
  writeUnsigned(w, errors);
  w.write(", skipped probes: ");
  writeUnsigned(w, skipped);
  w.put('\n');
  return w.size();
}

extern "C" size_t sonde_error_pass5_failed(char *out, size_t cap) {
  return writeLine(out, cap, "Pass 5: run failed.  [man error::pass5]\n");
}

extern "C" size_t sonde_error_too_many_skipped(char *out, size_t cap) {
  return writeLine(out, cap,
                   "ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t "
                   "for more details.\n");
}
