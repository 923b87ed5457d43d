// Format strings -> SondeFormatItem lists; the one parser shared by the compiler
// (checking printf at pass 1) and the runtime (when a module loads).
#include "runtime/format/FormatAbi.h"

#include <cstdint>

namespace {

bool conversionOf(char c, uint8_t *conv) {
  switch (c) {
  case 'd':
  case 'i': *conv = SONDE_CONV_SIGNED_DEC; return true;
  case 'u': *conv = SONDE_CONV_UNSIGNED_DEC; return true;
  case 'x': *conv = SONDE_CONV_HEX_LOWER; return true;
  case 'X': *conv = SONDE_CONV_HEX_UPPER; return true;
  case 'o': *conv = SONDE_CONV_OCTAL; return true;
  case 'p': *conv = SONDE_CONV_POINTER; return true;
  case 'c': *conv = SONDE_CONV_CHAR; return true;
  case 's': *conv = SONDE_CONV_STRING; return true;
  case 'b': *conv = SONDE_CONV_BINARY; return true;
  case 'm': *conv = SONDE_CONV_MEMORY; return true;
  case 'M': *conv = SONDE_CONV_MEMORY_HEX; return true;
  default: return false;
  }
}

uint8_t flagOf(char c) {
  switch (c) {
  case '-': return SONDE_FMT_LEFT;
  case '+': return SONDE_FMT_PLUS;
  case ' ': return SONDE_FMT_SPACE;
  case '0': return SONDE_FMT_ZERO;
  case '#': return SONDE_FMT_HASH;
  default: return 0;
  }
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

uint8_t saturatingIncrement(uint8_t v) { return v == UINT8_MAX ? v : static_cast<uint8_t>(v + 1); }

// Reads '*' or digits at text[i] (saturating at INT32_MAX) into kind/value.
void readSize(const char *text, size_t len, size_t &i, uint8_t &kind, int32_t &value) {
  if (i < len && text[i] == '*') {
    kind = SONDE_SIZE_STAR;
    ++i;
    return;
  }
  if (i >= len || !isDigit(text[i]))
    return;
  kind = SONDE_SIZE_GIVEN;
  int64_t v = 0;
  for (; i < len && isDigit(text[i]); ++i)
    v = v >= INT32_MAX ? INT32_MAX : v * 10 + (text[i] - '0');
  value = static_cast<int32_t>(v > INT32_MAX ? INT32_MAX : v);
}

class ItemSink {
public:
  ItemSink(SondeFormatItem *items, size_t capacity) : items_(items), capacity_(capacity) {}
  void add(const SondeFormatItem &item) {
    if (count_ < capacity_)
      items_[count_] = item;
    ++count_;
  }
  void literal(size_t begin, size_t end) {
    if (begin >= end)
      return;
    SondeFormatItem item{};
    item.conv = SONDE_CONV_LITERAL;
    item.offset = static_cast<uint32_t>(begin);
    item.length = static_cast<uint32_t>(end - begin);
    add(item);
  }
  size_t count() const { return count_; }

private:
  SondeFormatItem *items_;
  size_t capacity_;
  size_t count_ = 0;
};

} // namespace

extern "C" SondeFormatParseStatus sonde_format_parse(const char *text, size_t len,
                                                     SondeFormatItem *items, size_t capacity,
                                                     size_t *count, size_t *error_offset) {
  ItemSink sink(items, capacity);
  SondeFormatParseStatus status = SONDE_FORMAT_PARSED;
  size_t literalStart = 0;
  size_t i = 0;
  while (i < len) {
    if (text[i] != '%') {
      ++i;
      continue;
    }
    sink.literal(literalStart, i);
    const size_t start = i++;
    SondeFormatItem item{};
    item.offset = static_cast<uint32_t>(start);
    if (i < len && text[i] == '%') {
      item.conv = SONDE_CONV_PERCENT;
      item.length = 2;
      sink.add(item);
      literalStart = ++i;
      continue;
    }
    for (uint8_t flag; i < len && (flag = flagOf(text[i])) != 0; ++i) {
      item.flags |= flag;
      item.flag_chars = saturatingIncrement(item.flag_chars);
    }
    readSize(text, len, i, item.width_kind, item.width);
    if (i < len && text[i] == '.') {
      ++i;
      readSize(text, len, i, item.precision_kind, item.precision);
    }
    for (; i < len && text[i] == 'l'; ++i)
      item.length_mods = saturatingIncrement(item.length_mods);
    if (i >= len) {
      status = SONDE_FORMAT_INCOMPLETE;
    } else if (!conversionOf(text[i], &item.conv) || item.length_mods > 2) {
      status = SONDE_FORMAT_BAD_CONVERSION;
    }
    if (status != SONDE_FORMAT_PARSED) {
      if (error_offset != nullptr)
        *error_offset = start;
      break;
    }
    item.length = static_cast<uint32_t>(++i - start);
    sink.add(item);
    literalStart = i;
  }
  if (status == SONDE_FORMAT_PARSED)
    sink.literal(literalStart, len);
  if (count != nullptr)
    *count = sink.count();
  return status;
}

extern "C" const char *sonde_format_parse_message(SondeFormatParseStatus status) {
  switch (status) {
  case SONDE_FORMAT_INCOMPLETE: return "trailing incomplete print format conversion";
  case SONDE_FORMAT_BAD_CONVERSION: return "invalid or missing conversion specifier";
  default: return "";
  }
}

extern "C" uint32_t sonde_format_arg_count(const SondeFormatItem *items, size_t count) {
  uint32_t n = 0;
  for (size_t k = 0; k < count; ++k) {
    if (items[k].conv == SONDE_CONV_LITERAL || items[k].conv == SONDE_CONV_PERCENT)
      continue;
    n +=
        1 + (items[k].width_kind == SONDE_SIZE_STAR) + (items[k].precision_kind == SONDE_SIZE_STAR);
  }
  return n;
}
