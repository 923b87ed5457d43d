// Kernel addresses to `name+0xoff/0xsize [module]`, from /proc/kallsyms: what
// symname(), symdata(), print_stack() and kernel backtraces print. kallsyms has
// no sizes: a symbol reaches to the next one, as in stap. Without the rights
// to see addresses (kptr_restrict) the table is empty and addresses print as
// hex.
#pragma once

#include "runtime/symbols/AddressSymbol.h"

#include <string>
#include <string_view>
#include <vector>

namespace sonde::symbols {

class KernelSymbolTable {
public:
  // From kallsyms text: "ADDRESS TYPE NAME [MODULE]" lines.
  static KernelSymbolTable parse(std::string_view kallsyms);
  // The running kernel's, read once on first use.
  static const KernelSymbolTable &running();

  // The symbol at or before `address`; the module is "kernel" for the core
  // image. Only the address is set past the last symbol or before the first.
  AddressSymbol resolve(uint64_t address) const;
  size_t size() const { return symbols_.size(); }

private:
  struct Symbol {
    uint64_t address;
    size_t order; // in kallsyms
    std::string name, module;
  };
  std::vector<Symbol> symbols_; // by address
};

} // namespace sonde::symbols
