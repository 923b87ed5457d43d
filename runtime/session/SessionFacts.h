// What sonde captures when a session starts and handlers in every process read
// back from the segment (values::SessionFacts): the invoking user, for
// is_myproc(), and the local time zone, for tz_gmtoff(), tz_name() and
// tz_ctime() (stap's staprun passes the zone to its module at startup).
#pragma once

#include "runtime/session/ContextAbi.h"
#include "runtime/values/SegmentFormat.h"

namespace sonde::session {

// sonde, before any handler runs.
void captureSessionFacts(sonde_segment *seg);

inline const values::SessionFacts &sessionFacts(const sonde_context *ctx) {
  return values::segmentHeader(ctx->segment).facts;
}

} // namespace sonde::session
