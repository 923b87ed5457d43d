// Link-time addresses of named symbols of one ELF object, for marker arguments that
// name a global ("8@counter(%rip)", "$table+4").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace sonde::probes::marker {

class ElfSymbols {
public:
  // The address of each of `names` that the file at `path` defines, from .symtab, or
  // from .dynsym when the file is stripped. Undefined and thread-local symbols are
  // left out (neither has an address in the file). On failure returns nullopt and
  // sets `error` to "PATH: why".
  static std::optional<std::map<std::string, uint64_t>>
  addresses(const std::string &path, const std::set<std::string> &names, std::string &error);
};

} // namespace sonde::probes::marker
