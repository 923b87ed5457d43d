#include "runtime/symbols/AddressSymbol.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace sonde::symbols {

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "name+0xoff/0xsize" (withSize) or "name+0xoff".
std::string symbolPart(const AddressSymbol &s, bool withSize) {
  std::string text = s.name + "+" + hex(s.offset);
  return withSize ? text + "/" + hex(s.size) : text;
}

// "0xADDR [module+0xoff/0xsize]" (withSize) or "0xADDR [module+0xoff]".
std::string modulePart(const AddressSymbol &s, const std::string &module, bool withSize) {
  std::string text = hex(s.address) + " [" + module + "+" + hex(s.moduleOffset);
  return (withSize ? text + "/" + hex(s.moduleSize) : text) + "]";
}

} // namespace

std::string formatSymbol(const AddressSymbol &s, SymbolStyle style) {
  bool named = !s.name.empty(), mapped = !s.module.empty();
  switch (style) {
  case SymbolStyle::Name: return named ? s.name : hex(s.address);
  case SymbolStyle::Data:
    if (named)
      return symbolPart(s, true) + (mapped ? " [" + s.module + "]" : "");
    return mapped ? modulePart(s, s.module, true) : hex(s.address);
  case SymbolStyle::Full:
    if (named)
      return " " + hex(s.address) + " : " + symbolPart(s, true) +
             (mapped ? " [" + s.module + "]" : "") + "\n";
    return " " + (mapped ? modulePart(s, s.module, true) : hex(s.address)) + "\n";
  case SymbolStyle::Simple:
    if (named)
      return symbolPart(s, false) + (mapped ? " [" + baseName(s.module) + "]" : "") + "\n";
    return (mapped ? modulePart(s, baseName(s.module), false) : hex(s.address)) + "\n";
  case SymbolStyle::Brief: return (named ? symbolPart(s, false) : hex(s.address)) + "\n";
  case SymbolStyle::Saved:
    return " " + hex(s.address) + " : " + formatSymbol(s, SymbolStyle::Data) + "\n";
  }
  return hex(s.address);
}

std::string formatStack(std::string_view addresses, SymbolStyle style, size_t limit,
                        const std::function<AddressSymbol(uint64_t)> &resolve) {
  std::string text;
  while (!addresses.empty()) {
    size_t n = addresses.find(' ');
    std::string token(addresses.substr(0, n));
    addresses.remove_prefix(n == std::string_view::npos ? addresses.size() : n + 1);
    if (token.empty())
      continue;
    AddressSymbol s = resolve(std::strtoull(token.c_str(), nullptr, 16));
    // print_ustack shows each address as the saved string spelled it.
    std::string line = style == SymbolStyle::Saved
                           ? " " + token + " : " + formatSymbol(s, SymbolStyle::Data) + "\n"
                           : formatSymbol(s, style);
    if (limit && text.size() + line.size() > limit)
      break;
    text += line;
  }
  return text;
}

} // namespace sonde::symbols
