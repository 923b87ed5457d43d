// What an address of a process resolves to, and stap's text forms of it
// (runtime/sym.c's _STP_SYM_* styles), shared by usymname/usymdata and the
// backtrace printers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace sonde::symbols {

struct AddressSymbol {
  uint64_t address = 0;
  std::string module; // path of the mapped object; empty: in none
  uint64_t moduleOffset = 0, moduleSize = 0;
  std::string name; // empty: no symbol holds the address
  uint64_t offset = 0, size = 0;
};

enum class SymbolStyle {
  Name,   // usymname: "main", else the address in hex
  Data,   // usymdata: "main+0x16/0x30 [/usr/bin/app]"
  Full,   // print_ubacktrace: " 0x4005d6 : main+0x16/0x30 [/usr/bin/app]\n"
  Simple, // sprint_ubacktrace: "main+0x16 [app]\n"
  Brief,  // print_ubacktrace_brief: "main+0x16\n"
  Saved,  // print_ustack: " 0x4005d6 : " then the Data form, "\n"
};

// `s` in `style`; an address nothing is known about prints as hex.
std::string formatSymbol(const AddressSymbol &s, SymbolStyle style);

// A stack given as hex addresses separated by spaces (ubacktrace()'s form),
// one line per address in `style` (Full, Simple, Brief or Saved), each address
// resolved by `resolve`; with `limit`, only the whole lines that fit in it.
std::string formatStack(std::string_view addresses, SymbolStyle style, size_t limit,
                        const std::function<AddressSymbol(uint64_t)> &resolve);

} // namespace sonde::symbols
