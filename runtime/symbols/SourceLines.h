// The source file and line of an address of this process, from the DWARF line
// tables of its objects (or their separate debug files) through libdw's dwfl.
// libdw is opened on first use with RTLD_LOCAL: the agent links only libc,
// libelf and libunwind, and scripts that never ask for lines never load it.
#pragma once

#include <cstdint>
#include <string>

namespace sonde::symbols {

struct SourceLine {
  std::string file; // empty: unknown
  int line = 0;     // 0: unknown
};

// Unknown fields stay empty when the object has no line table for `address`.
// Sets *error (and returns nothing) only if libdw itself is unusable.
SourceLine sourceLineInThisProcess(uint64_t address, std::string *error);

} // namespace sonde::symbols
