#include "runtime/session/ProbeRunner.h"

#include <string>

namespace sonde::session {

namespace {

void reportError(Runtime &rt, const sonde_context &ctx) {
  const LoadedModule &m = *rt.module;
  const std::string &near = m.locationText(ctx.error_location);
  char line[2048];
  size_t n = sonde_error_line(ctx.error_message, near.empty() ? nullptr : near.c_str(), nullptr,
                              0, m.probe(ctx.probe_index).pp, line, sizeof line);
  writeError(rt, line, n);
  if (sonde_session_note_error(ctx.segment) && rt.wake)
    rt.wake();
}

} // namespace

void runProbe(Runtime &rt, uint32_t index, int64_t actions) {
  ThreadState &ts = rt.thread();
  sonde_context ctx{};
  ctx.segment = rt.segment->abi();
  ctx.actions_left = actions;
  ctx.probe_index = index;
  ctx.error_message = ts.errorMessage.data();
  ctx.error_message[0] = '\0';
  ctx.runtime = &rt;
  ctx.thread = &ts;

  rt.module->probe(index).handler(&ctx);
  // An error may have abandoned foreach loops before their end calls.
  sonde_scratch_release_all();
  ts.output->flush(*rt.output);
  if (ctx.error)
    reportError(rt, ctx);
}

} // namespace sonde::session
