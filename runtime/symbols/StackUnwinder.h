// The call stack of a thread stopped at a marker, unwound with libunwind from
// the registers the agent saved there (DWARF CFI, so code built without frame
// pointers unwinds too). libunwind is opened on first use with RTLD_LOCAL:
// its _Unwind_* entry points must not interpose on the target's C++ exception
// runtime, and scripts without backtraces never load it.
#pragma once

#include "runtime/session/MarkerAbi.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace sonde::symbols {

// Writes up to `max` program counters, innermost first, starting with `pc`
// (the marker's address); returns how many. Fewer than 1 only if libunwind is
// missing, with the reason in *error.
size_t unwindFromMarker(const sonde_marker_frame &frame, uint64_t pc, uint64_t *pcs, size_t max,
                        std::string *error);

} // namespace sonde::symbols
