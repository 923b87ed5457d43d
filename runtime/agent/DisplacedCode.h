// A stock site's displaced instructions in its stub (sonde_displaced_code,
// built by sonde: compiler/codegen/DisplacedCode.h): copied and fixed up for
// the stub's address, and where a thread found inside the region continues.
#pragma once

#include "runtime/session/ModuleAbi.h"

#include <cstdint>
#include <string>

namespace sonde::agent {

// Writes `code`'s bytes at `at` with its fixups applied for an object loaded
// at `bias`: false (and error) if a rel32 cannot reach its target from there.
bool writeDisplaced(uint8_t *at, const sonde_displaced_code &code, uintptr_t bias,
                    std::string *error);

// Where a thread at `rip` strictly inside the region at `site` continues in the
// continuation at `continuation`; 0 when `rip` is no instruction of the region
// that runs.
uintptr_t relocatedPoint(const sonde_displaced_code &code, uintptr_t site, uintptr_t continuation,
                         uintptr_t rip);

} // namespace sonde::agent
