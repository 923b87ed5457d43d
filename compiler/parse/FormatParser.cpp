// printf formats are parsed by the runtime's parser (runtime/format), so the
// compiler accepts exactly what the runtime will print; this adapts its items.
#include "parse/FormatParser.h"

#include "runtime/format/FormatParser.h"

namespace sonde::parse {

using ast::FormatComponent;

namespace {

FormatComponent::Size sizeOf(uint8_t kind) {
  switch (kind) {
  case SONDE_SIZE_GIVEN: return FormatComponent::Size::Given;
  case SONDE_SIZE_STAR: return FormatComponent::Size::Star;
  default: return FormatComponent::Size::None;
  }
}

} // namespace

FormatParse parseFormat(const std::string &format) {
  FormatParse out;
  const format::ParsedFormat parsed = format::parseFormat(format);
  if (!parsed.ok()) {
    out.error = parsed.error();
    return out;
  }
  for (const SondeFormatItem &item : parsed.items) {
    FormatComponent c;
    // SondeConv has FormatComponent::Conv's order.
    c.conv = static_cast<FormatComponent::Conv>(item.conv);
    c.source = std::string(format::itemText(format, item));
    if (item.conv == SONDE_CONV_LITERAL) {
      c.literal = c.source;
    } else if (item.conv != SONDE_CONV_PERCENT) {
      c.flagMinus = item.flags & SONDE_FMT_LEFT;
      c.flagPlus = item.flags & SONDE_FMT_PLUS;
      c.flagZero = item.flags & SONDE_FMT_ZERO;
      c.flagSpace = item.flags & SONDE_FMT_SPACE;
      c.flagHash = item.flags & SONDE_FMT_HASH;
      c.width = sizeOf(item.width_kind);
      c.widthValue = item.width;
      c.precision = sizeOf(item.precision_kind);
      c.precisionValue = item.precision;
      c.lengthModifiers = item.length_mods;
      if (format::beyondStap(item))
        out.beyondStap.push_back(c.source);
    }
    out.components.push_back(std::move(c));
  }
  return out;
}

size_t formatArgumentCount(const std::vector<FormatComponent> &components) {
  size_t n = 0;
  for (const auto &c : components) {
    if (c.conv == FormatComponent::Conv::Literal || c.conv == FormatComponent::Conv::Percent)
      continue;
    n += 1 + (c.width == FormatComponent::Size::Star) +
         (c.precision == FormatComponent::Size::Star);
  }
  return n;
}

} // namespace sonde::parse
