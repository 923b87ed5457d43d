// The lines agents report to sonde ("ready", "error: ..."), read from a pipe or
// socket that the traced process can write too: at most 64 KiB a call and
// 4 KiB a line, so a process flooding it can neither keep sonde reading nor
// make it hold more.
#pragma once

#include <optional>
#include <string>

namespace sonde::session {

class AgentReportLines {
public:
  // Reads what is there from the non-blocking `fd`; false once it reached
  // EOF or failed (stop polling it then).
  bool readFrom(int fd);
  // The next whole line (without its newline), or nullopt.
  std::optional<std::string> next();

private:
  std::string pending_;
  bool cutLine_ = false; // the last line got too long: its rest is dropped
};

} // namespace sonde::session
