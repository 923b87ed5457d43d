// stap's -t report: each probe's hits and the time its handler took.
#pragma once

#include "runtime/session/Runtime.h"

namespace sonde::session {

// Prints "----- probe hit report: " and one line per probe to the output when
// the module was compiled with -t (its probes name their timing globals);
// nothing otherwise.
void printProbeHitReport(Runtime &rt);

} // namespace sonde::session
