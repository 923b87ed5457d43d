// Running a bundled example (examples/GROUP/NAME.probe) the way its header
// says, and reading the numbers it prints.
#pragma once

#include "../corpus/ProcessRunner.h"

#include <optional>
#include <string>
#include <vector>

namespace sonde::examples {

// examples/RELATIVE (e.g. "latency/request-latency.probe").
std::string examplePath(const std::string &relative);
// A demo target built from examples/targets/NAME.c, with its arguments:
// "/build/examples/targets/NAME ARGS".
std::string targetCommand(const std::string &name, const std::string &args = "");

// sonde OPTIONS examples/RELATIVE SCRIPT_ARGS, in a scratch directory (removed
// after), 120 s at most.
test::ProcessResult runExample(const std::string &relative, const std::vector<std::string> &options,
                               const std::vector<std::string> &scriptArgs = {});

// The command, status, stdout and stderr, for assertion messages.
std::string describe(const test::ProcessResult &r);

// The integer captured by the first group of `pattern` (ECMAScript) on the
// first line of `text` where it matches, or nullopt.
std::optional<long long> numberAfter(const std::string &text, const std::string &pattern);
// Every such integer, in the order of the lines.
std::vector<long long> numbersAfter(const std::string &text, const std::string &pattern);
// The groups captured by `pattern` on every line of `text` where it matches
// ([0] is the first group), in the order of the lines.
std::vector<std::vector<std::string>> rowsMatching(const std::string &text,
                                                   const std::string &pattern);

// Whether sonde refused kernel probes for want of privileges (its one-line
// reason is then in stderr): kernel examples skip rather than fail.
bool kernelProbesRefused(const test::ProcessResult &r);

// The lines of `text` from the first one matching `pattern` up to the next
// empty line (or the end), or "" if none matches: one block of the output,
// such as a histogram under its heading.
std::string blockFrom(const std::string &text, const std::string &pattern);
// The counts of the rows of every @hist_log/@hist_linear in `text`, summed.
long long histogramTotal(const std::string &text);

} // namespace sonde::examples
