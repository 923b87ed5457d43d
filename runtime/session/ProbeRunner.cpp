#include "runtime/session/ProbeRunner.h"

#include "runtime/session/RecordWriter.h"
#include "runtime/session/SessionRequests.h"

#include <string>

namespace sonde::session {

namespace {

void reportError(Runtime &rt, const sonde_context &ctx) {
  const LoadedModule &m = *rt.module;
  const std::string &near = m.locationText(ctx.error_location);
  char line[2048];
  size_t n = sonde_error_line(ctx.error_message, near.empty() ? nullptr : near.c_str(), nullptr, 0,
                              m.probe(ctx.probe_index).pp, line, sizeof line);
  writeError(rt, line, n);
  if (sonde_session_note_error(ctx.segment) && rt.wake)
    rt.wake();
}

} // namespace

void finishFailedHandler(Runtime &rt, const sonde_context &ctx) {
  if (ctx.error == SONDE_CONTEXT_ABORTED) {
    sonde_session_request_exit(ctx.segment);
    if (rt.wake)
      rt.wake();
  } else {
    reportError(rt, ctx);
  }
}

void runProbe(Runtime &rt, uint32_t index, int64_t actions) {
  runHandler(rt, rt.thread(), rt.module->probe(index).handler, index, actions, nullptr,
             FlushPolicy::AfterHandler);
  if (rt.requests)
    rt.requests->serve(); // system() commands start after the handler, as in stap
}

void runGlobalInitializer(Runtime &rt) {
  if (sonde_handler_fn init = rt.module->desc().init_globals)
    runHandler(rt, rt.thread(), init, 0, rt.module->layout().limits().max_action_interruptible,
               nullptr, FlushPolicy::AfterHandler);
}

} // namespace sonde::session
