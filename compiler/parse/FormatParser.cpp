#include "parse/FormatParser.h"

#include <cctype>
#include <limits>

namespace sonde::parse {

using ast::FormatComponent;

namespace {

std::optional<FormatComponent::Conv> conversionOf(char c) {
  using C = FormatComponent::Conv;
  switch (c) {
  case 'd':
  case 'i': return C::SignedDec;
  case 'u': return C::UnsignedDec;
  case 'x': return C::HexLower;
  case 'X': return C::HexUpper;
  case 'o': return C::Octal;
  case 'p': return C::Pointer;
  case 'c': return C::Char;
  case 's': return C::String;
  case 'b': return C::Binary;
  case 'm': return C::Memory;
  case 'M': return C::MemoryHex;
  default: return std::nullopt;
  }
}

// Reads `*` or a decimal number at format[i].
FormatComponent::Size readSize(const std::string &f, size_t &i, int64_t &value) {
  if (i < f.size() && f[i] == '*') {
    ++i;
    return FormatComponent::Size::Star;
  }
  if (i >= f.size() || !std::isdigit(static_cast<unsigned char>(f[i])))
    return FormatComponent::Size::None;
  value = 0;
  while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i]))) {
    if (value < std::numeric_limits<int32_t>::max())
      value = value * 10 + (f[i] - '0');
    ++i;
  }
  return FormatComponent::Size::Given;
}

} // namespace

FormatParse parseFormat(const std::string &f) {
  FormatParse out;
  std::string literal;
  auto flushLiteral = [&] {
    if (literal.empty())
      return;
    FormatComponent c;
    c.literal = std::move(literal);
    c.source = c.literal;
    out.components.push_back(std::move(c));
    literal.clear();
  };
  size_t i = 0;
  while (i < f.size()) {
    if (f[i] != '%') {
      literal += f[i++];
      continue;
    }
    const size_t start = i++;
    if (i < f.size() && f[i] == '%') {
      ++i;
      flushLiteral();
      FormatComponent c;
      c.conv = FormatComponent::Conv::Percent;
      c.source = "%%";
      out.components.push_back(std::move(c));
      continue;
    }
    flushLiteral();
    FormatComponent c;
    // stap reads one flag and then the width, so in `%-08d` its 0 is part of the
    // width; any other second flag is beyond stap.
    int stapFlags = 0;
    for (; i < f.size(); ++i) {
      char ch = f[i];
      if (ch != '0' || stapFlags == 0)
        ++stapFlags; // overcounts a non-flag by one, which ends the loop anyway
      if (ch == '-')
        c.flagMinus = true;
      else if (ch == '+')
        c.flagPlus = true;
      else if (ch == '0')
        c.flagZero = true;
      else if (ch == ' ')
        c.flagSpace = true;
      else if (ch == '#')
        c.flagHash = true;
      else {
        --stapFlags;
        break;
      }
    }
    c.width = readSize(f, i, c.widthValue);
    if (i < f.size() && f[i] == '.') {
      ++i;
      c.precision = readSize(f, i, c.precisionValue);
      if (c.precision == FormatComponent::Size::None) {
        c.precision = FormatComponent::Size::Given; // "%.s" is precision 0
        c.precisionValue = 0;
      }
    }
    while (i < f.size() && f[i] == 'l') {
      ++c.lengthModifiers;
      ++i;
    }
    if (i >= f.size()) {
      out.error = "trailing incomplete print format conversion";
      return out;
    }
    std::optional<FormatComponent::Conv> conv = conversionOf(f[i]);
    if (!conv || c.lengthModifiers > 2) {
      out.error = "invalid or missing conversion specifier";
      return out;
    }
    c.conv = *conv;
    ++i;
    c.source = f.substr(start, i - start);
    if (stapFlags > 1 || c.lengthModifiers > 1)
      out.beyondStap.push_back(c.source);
    out.components.push_back(std::move(c));
  }
  flushLiteral();
  return out;
}

size_t formatArgumentCount(const std::vector<FormatComponent> &components) {
  size_t n = 0;
  for (const auto &c : components) {
    if (c.conv == FormatComponent::Conv::Literal || c.conv == FormatComponent::Conv::Percent)
      continue;
    n +=
        1 + (c.width == FormatComponent::Size::Star) + (c.precision == FormatComponent::Size::Star);
  }
  return n;
}

} // namespace sonde::parse
