// bytes_to_string (tapset/linux/proc_mem.stp): a byte count in 5 characters.
#include "runtime/format/Conversions.h"
#include "runtime/format/TextWriter.h"
#include "runtime/strings/StringAbi.h"

using namespace sonde::rt;

namespace {

void writeDecimalField(TextWriter &w, int64_t v, int64_t width, int64_t precision) {
  writeNumber(w, static_cast<uint64_t>(v), 10, width, precision, kSigned);
}

// stap's _stp_number_to_string_postfix: " x.yyP", "xx.yP", " xxxP" or "xxxxP".
void writeWithSuffix(TextWriter &w, int64_t whole, int64_t remainder, char suffix) {
  if (whole < 10) {
    writeDecimalField(w, whole, -1, -1);
    w.put('.');
    writeDecimalField(w, remainder * 100 / 1024, -1, 2);
  } else if (whole < 100) {
    writeDecimalField(w, whole, 2, -1);
    w.put('.');
    writeDecimalField(w, remainder * 10 / 1024, -1, -1);
  } else {
    writeDecimalField(w, whole, 4, -1);
  }
  w.put(suffix);
}

} // namespace

extern "C" size_t sonde_str_bytes_to_string(int64_t bytes, char *out, size_t cap) {
  TextWriter w(out, cap);
  if (bytes < 1024) {
    writeDecimalField(w, bytes, 5, -1);
    return w.terminate();
  }
  // Kilo and mega while the number stays below 1024 of them; giga otherwise.
  for (const char *suffix = "KMG";; ++suffix) {
    const int64_t remainder = bytes % 1024;
    bytes /= 1024;
    if (bytes < 1024 || suffix[1] == '\0') {
      writeWithSuffix(w, bytes, remainder, *suffix);
      break;
    }
  }
  return w.terminate();
}
