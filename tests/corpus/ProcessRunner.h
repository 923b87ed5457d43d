// Runs a program directly (fork/exec, no shell) and captures what it writes to
// stdout and stderr, so tests can compare `sonde`'s output byte for byte.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace sonde::test {

struct ProcessResult {
  int exitCode = -1;     // valid when exited
  bool exited = false;   // false: killed by a signal (crash) or by the timeout
  int signal = 0;        // the terminating signal when !exited
  bool timedOut = false; // we killed it after `timeout`
  std::string stdoutText;
  std::string stderrText;
  std::string error; // set when the process could not be started at all

  // "exit 1", "signal 11", "timed out" — for assertion messages.
  std::string describe() const;
};

// Runs `program` with `args` (argv[1..]) in `workDir`, stdin from /dev/null,
// capturing stdout and stderr. The child is killed if it runs longer than `timeout`.
ProcessResult runProcess(const std::string &program, const std::vector<std::string> &args,
                         const std::string &workDir, std::chrono::milliseconds timeout);

// `text` split at newlines (a last line without one counts too).
std::vector<std::string> linesOf(const std::string &text);

} // namespace sonde::test
