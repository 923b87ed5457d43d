// Debian's python3.11 and its stock sys/sdt.h markers (1-byte sites): the calls
// a script counts at function__entry, keyed by function and file, equal the
// calls Python itself counts with sys.setprofile (e2e_python_calls.py), exactly.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <map>
#include <unistd.h>

namespace sonde::e2e {
namespace {

const char *kPython = "/usr/bin/python3.11";

// "FUNCTION\tFILENAME\tCOUNT" lines of `text` whose FILENAME is `file`, as
// FUNCTION -> COUNT; a line of another shape is kept whole under "?" so that a
// difference shows it.
std::map<std::string, std::string> callsIn(const std::string &text, const std::string &file) {
  std::map<std::string, std::string> calls;
  for (const std::string &line : test::linesOf(text)) {
    size_t tab1 = line.find('\t');
    size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos) {
      calls["?" + line] = "";
      continue;
    }
    if (line.substr(tab1 + 1, tab2 - tab1 - 1) == file)
      calls[line.substr(0, tab1)] = line.substr(tab2 + 1);
  }
  return calls;
}

TEST(PythonFunctionEntry, CountsEqualPythonsOwnProfile) {
  if (access(kPython, X_OK) != 0)
    GTEST_SKIP() << kPython << " is not installed";
  ScratchDir dir;
  std::string program = std::string(E2E_SOURCE_DIR) + "/e2e_python_calls.py";
  std::string ownCounts = dir.file("own_counts");
  std::string script =
      "global calls\n" +
      markProbe(kPython, "function__entry", "calls[user_string($arg2), user_string($arg1)]++") +
      "probe end { foreach ([f, file] in calls) "
      "printf(\"%s\\t%s\\t%d\\n\", f, file, calls[f, file]) }\n";
  std::string command = std::string(kPython) + " " + program + " " + ownCounts;
  test::ProcessResult result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);

  std::map<std::string, std::string> expected = callsIn(readFile(ownCounts), program);
  // The program's own table must hold its recursion, generators and methods,
  // so that two empty tables cannot pass.
  for (const char *function : {"fib", "countdown", "endless", "deposit", "fee", "<listcomp>"})
    ASSERT_TRUE(expected.count(function)) << function << " missing from " << ownCounts << ":\n"
                                          << readFile(ownCounts);
  EXPECT_EQ(callsIn(result.stdoutText, program), expected) << describeRun(script, command, result);
}

} // namespace
} // namespace sonde::e2e
