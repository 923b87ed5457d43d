// The function and data symbols of one ELF object, sorted by link-time address,
// for turning addresses into `name+0xoff/0xsize`. Reads .symtab when the file has
// one, else its separate debug file (/usr/lib/debug/.build-id), else .dynsym.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::symbols {

struct ElfSymbol {
  uint64_t address = 0; // link-time
  uint64_t size = 0;
  std::string name;
  bool global = false; // GLOBAL or WEAK binding: preferred among aliases
};

class ElfSymbolTable {
public:
  // The symbols of the ELF file at `path`; an empty table if it cannot be read
  // (a stripped or vanished object still has a module name to show).
  static std::unique_ptr<ElfSymbolTable> load(const std::string &path);
  // From symbols given directly (tests).
  explicit ElfSymbolTable(std::vector<ElfSymbol> symbols);

  // The symbol whose [address, address + size) holds `linkAddress`; a symbol
  // of size 0 holds only its own address. Null if none does.
  const ElfSymbol *containing(uint64_t linkAddress) const;
  // A global (or weak) symbol called `name`, or null.
  const ElfSymbol *named(std::string_view name) const;
  size_t size() const { return symbols_.size(); }

private:
  std::vector<ElfSymbol> symbols_; // by address, then larger size first
};

} // namespace sonde::symbols
