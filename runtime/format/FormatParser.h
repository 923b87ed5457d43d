// C++ face of sonde_format_parse for code that runs outside the event path (the
// compiler checking printf formats at pass 1, the runtime loading a module).
#pragma once

#include "runtime/format/FormatAbi.h"

#include <string_view>
#include <vector>

namespace sonde::format {

struct ParsedFormat {
  std::vector<SondeFormatItem> items;
  SondeFormatParseStatus status = SONDE_FORMAT_PARSED;
  size_t errorOffset = 0; // the '%' that starts the bad conversion

  bool ok() const { return status == SONDE_FORMAT_PARSED; }
  // stap's parse error text; "" when ok().
  const char *error() const { return sonde_format_parse_message(status); }
  uint32_t argCount() const { return sonde_format_arg_count(items.data(), items.size()); }
};

inline ParsedFormat parseFormat(std::string_view text) {
  ParsedFormat parsed;
  size_t count = 0;
  sonde_format_parse(text.data(), text.size(), nullptr, 0, &count, nullptr);
  parsed.items.resize(count);
  parsed.status = sonde_format_parse(text.data(), text.size(), parsed.items.data(), count, &count,
                                     &parsed.errorOffset);
  parsed.items.resize(count);
  return parsed;
}

// The item as written in `text`: literal text, "%%", or the conversion ("%-08d").
inline std::string_view itemText(std::string_view text, const SondeFormatItem &item) {
  return text.substr(item.offset, item.length);
}

// Accepted by us but rejected by stap: several flags, or "ll". stap takes one
// flag and reads a '0' after it as the start of the width ("%-08d", "%#010x").
inline bool beyondStap(const SondeFormatItem &item) {
  unsigned flags = item.flag_chars;
  if (flags > 1 && (item.flags & SONDE_FMT_ZERO))
    --flags;
  return flags > 1 || item.length_mods > 1;
}

} // namespace sonde::format
