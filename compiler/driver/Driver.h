// Runs the passes a command line asks for and turns their outcome into stap's
// pass messages and an exit status.
#pragma once

#include "driver/CommandLine.h"

#include <iosfwd>

namespace sonde {

// Returns the process exit status.
int runDriver(const CommandLine &cl, std::ostream &out, std::ostream &err);

} // namespace sonde
