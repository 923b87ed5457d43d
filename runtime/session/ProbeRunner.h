// Runs one probe handler with a fresh sonde_context and reports what it left in
// ctx->error the way stap does.
#pragma once

#include "runtime/session/Runtime.h"

namespace sonde::session {

// Runs probe `index` of the module with a MAXACTION budget of `actions`.
// Output is flushed afterwards; a runtime error is printed and counted (and may
// end the session, which calls rt.wake).
void runProbe(Runtime &rt, uint32_t index, int64_t actions);

// Runs the module's global initializer (if any) on a fresh segment.
void runGlobalInitializer(Runtime &rt);

} // namespace sonde::session
