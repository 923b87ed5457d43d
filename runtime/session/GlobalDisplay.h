// stap's end-of-run display of globals a script writes but never reads.
#pragma once

#include "runtime/session/Runtime.h"

namespace sonde::session {

// Prints every global of the module's display list to the output, in order.
void displayGlobals(Runtime &rt);

} // namespace sonde::session
