// Runs one probe handler with a fresh sonde_context and reports what it left in
// ctx->error the way stap does.
#pragma once

#include "runtime/session/Runtime.h"
#include "runtime/values/ScratchArena.h"

namespace sonde::session {

// When a handler's output leaves the thread's buffer. sonde flushes after every
// handler; the in-target agent only when the buffer fills (and at thread exit,
// fork, exec, detach), because a write() per event is too slow there.
enum class FlushPolicy { AfterHandler, WhenFull };

// What a handler left in ctx.error (an exit() request or a runtime error):
// printed and counted the way stap does; may end the session (calls rt.wake).
void finishFailedHandler(Runtime &rt, const sonde_context &ctx);
// stap's text for a runtime error status (sonde_error_code or sonde_status).
const char *runtimeErrorText(int32_t status);

// Runs `fn` as probe `index` on this thread's state `ts`, with a MAXACTION
// budget of `actions` and ctx->probe_data = probeData. Inline: it is the body
// of every marker hit in a target.
inline void runHandler(Runtime &rt, ThreadState &ts, sonde_handler_fn fn, uint32_t index,
                       int64_t actions, const void *probeData, FlushPolicy flush) {
  sonde_context ctx{};
  ctx.segment = rt.segment->abi();
  ctx.actions_left = actions;
  ctx.probe_index = index;
  ctx.error_message = ts.errorMessage.data();
  ctx.error_message[0] = '\0';
  ctx.probe_data = probeData;
  ctx.runtime = &rt;
  ctx.thread = &ts;
  ctx.record_cursor = ts.recordCursor;

  fn(&ctx);
  // An error may have abandoned foreach loops before their end calls.
  values::scratchReleaseAll();
  if (flush == FlushPolicy::AfterHandler)
    ts.flushOutput(*rt.output);
  if (ctx.error)
    finishFailedHandler(rt, ctx);
}

// Runs probe `index` of the module with a MAXACTION budget of `actions`.
// Output is flushed afterwards.
void runProbe(Runtime &rt, uint32_t index, int64_t actions);

// Runs the module's global initializer (if any) on a fresh segment.
void runGlobalInitializer(Runtime &rt);

} // namespace sonde::session
