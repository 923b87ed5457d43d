// `sonde -l PATTERN` / `-L PATTERN`: the concrete probe points a pattern names, one
// per line, sorted, each once, as `stap -l/-L` prints them; -L adds each marker's
// `$argN` variables and, in a comment, how its site is attached and what its note says.
#pragma once

#include "driver/Frontend.h"

#include <iosfwd>
#include <string>

namespace sonde {

struct ListingRequest {
  std::string pattern;        // one probe point or a comma-separated list
  bool withVariables = false; // -L
  std::string targetCommand;  // -c CMD: what a bare `process` names
  bool stockJumpPath = true;  // --stock-sites=trap clears it
};

// Prints the points to `out` and returns the exit status: 0 when something was listed;
// 1 when nothing matched (nothing printed, as stap does) or on an error, which goes to
// `err` naming the option.
int listProbePoints(const ListingRequest &request, FrontendOptions options, std::ostream &out,
                    std::ostream &err);

} // namespace sonde
