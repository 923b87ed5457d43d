// `sonde report DIR`: a binary trace recorded with -b, printed later as text
// (or JSON, or converted to CTF), all streams merged in time order.
#pragma once

#include <iosfwd>

namespace sonde {

// argv[0] is "report". Returns the exit status.
int runReportCommand(int argc, char **argv, std::ostream &out, std::ostream &err);

} // namespace sonde
