#include "runtime/symbols/KernelSymbols.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

namespace sonde::symbols {

KernelSymbolTable KernelSymbolTable::parse(std::string_view kallsyms) {
  KernelSymbolTable t;
  while (!kallsyms.empty()) {
    size_t nl = kallsyms.find('\n');
    std::string line(kallsyms.substr(0, nl));
    kallsyms.remove_prefix(nl == std::string_view::npos ? kallsyms.size() : nl + 1);
    std::istringstream in(line);
    std::string address, type, name, module;
    if (!(in >> address >> type >> name))
      continue;
    in >> module;
    uint64_t a = std::strtoull(address.c_str(), nullptr, 16);
    // Absolute and data symbols would split functions; 0 means "hidden".
    char kind = type.empty() ? ' ' : static_cast<char>(type[0] | 0x20);
    if (a == 0 || (kind != 't' && kind != 'w'))
      continue;
    if (module.size() > 2 && module.front() == '[' && module.back() == ']')
      module = module.substr(1, module.size() - 2);
    else
      module = "kernel";
    t.symbols_.push_back({a, t.symbols_.size(), std::move(name), std::move(module)});
  }
  // Of symbols at one address the first kallsyms lists stays first.
  std::sort(t.symbols_.begin(), t.symbols_.end(), [](const Symbol &x, const Symbol &y) {
    return x.address != y.address ? x.address < y.address : x.order < y.order;
  });
  return t;
}

const KernelSymbolTable &KernelSymbolTable::running() {
  static KernelSymbolTable *table = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    std::ifstream in("/proc/kallsyms");
    std::stringstream text;
    text << in.rdbuf();
    table = new KernelSymbolTable(parse(text.str()));
  });
  return *table;
}

AddressSymbol KernelSymbolTable::resolve(uint64_t address) const {
  AddressSymbol s;
  s.address = address;
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol &sym) { return a < sym.address; });
  if (it == symbols_.begin() || it == symbols_.end())
    return s;
  auto first = it - 1;
  while (first != symbols_.begin() && (first - 1)->address == first->address)
    --first; // aliases: the one kallsyms lists first
  const Symbol &sym = *first;
  s.name = sym.name;
  s.module = sym.module;
  s.offset = address - sym.address;
  s.size = it->address - sym.address;
  return s;
}

} // namespace sonde::symbols
