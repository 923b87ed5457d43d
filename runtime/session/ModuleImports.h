// Which runtime functions a compiled module calls: the undefined symbols of its
// dynamic symbol table. sonde serves a traced process's requests only of the
// kinds the script can make (a system() call, a switch_file()): a request the
// script cannot have made was forged in the shared segment.
#pragma once

#include <string>

namespace sonde::session {

// Whether the module at `path` calls `symbol`; true when the file cannot be
// read (nothing is refused on a guess).
bool moduleImports(const std::string &path, const char *symbol);

} // namespace sonde::session
