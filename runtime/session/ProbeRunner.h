// Runs one probe handler with a fresh sonde_context and reports what it left in
// ctx->error the way stap does.
#pragma once

#include "runtime/session/Runtime.h"

namespace sonde::session {

// When a handler's output leaves the thread's buffer. sonde flushes after every
// handler; the in-target agent only when the buffer fills (and at thread exit,
// fork, exec, detach), because a write() per event is too slow there.
enum class FlushPolicy { AfterHandler, WhenFull };

// Runs `fn` as probe `index` on this thread's state `ts`, with a MAXACTION
// budget of `actions` and ctx->probe_data = probeData. A runtime error is
// printed and counted (and may end the session, which calls rt.wake).
void runHandler(Runtime &rt, ThreadState &ts, sonde_handler_fn fn, uint32_t index, int64_t actions,
                const void *probeData, FlushPolicy flush);

// Runs probe `index` of the module with a MAXACTION budget of `actions`.
// Output is flushed afterwards.
void runProbe(Runtime &rt, uint32_t index, int64_t actions);

// Runs the module's global initializer (if any) on a fresh segment.
void runGlobalInitializer(Runtime &rt);

} // namespace sonde::session
