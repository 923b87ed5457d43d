// Skipped probes (a signal handler's marker re-entering a handler on the same
// thread) are counted, and fail the run only past MAXSKIPPED, as with stap.
#include "OutputTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::e2e {
namespace {

std::string reenterScript(const ScratchDir &dir) {
  return "global hits\n" +
         markProbe(E2E_REENTER, "slow",
                   "system(\"touch " + dir.file("inside") +
                       "\"); while (user_int($arg1) == 0) { }") +
         markProbe(E2E_REENTER, "signalled", "hits++") +
         "probe end { printf(\"hits %d\\n\", hits) }\n";
}

uint64_t signalsHandled(const ScratchDir &dir) {
  unsigned long long n = 0;
  return std::sscanf(readFile(dir.file("fired")).c_str(), "signals %llu", &n) == 1 ? n : 0;
}

TEST(SkippedProbes, UpToMaxSkippedWarnAndTheRunSucceeds) {
  ScratchDir dir;
  std::string script = reenterScript(dir);
  std::string command = std::string(E2E_REENTER) + " 5 " + dir.path();
  auto r = runSonde(script, command, dir.path(), {"--suppress-time-limits"});
  std::string run = describeRun(script, command, r);
  ASSERT_EQ(signalsHandled(dir), 5u) << run;
  // Each signal's marker fired inside the `slow` handler: all five skipped.
  EXPECT_EQ(r.stdoutText, "hits 0\n") << run;
  EXPECT_NE(r.stderrText.find("WARNING: Number of errors: 0, skipped probes: 5\n"),
            std::string::npos)
      << run;
  EXPECT_EQ(r.stderrText.find("Pass 5: run failed"), std::string::npos) << run;
  EXPECT_TRUE(r.exited && r.exitCode == 0) << run;
}

TEST(SkippedProbes, PastMaxSkippedTheRunFails) {
  ScratchDir dir;
  std::string script = reenterScript(dir);
  std::string command = std::string(E2E_REENTER) + " 5 " + dir.path();
  auto r = runSonde(script, command, dir.path(), {"--suppress-time-limits", "-D", "MAXSKIPPED=3"});
  std::string run = describeRun(script, command, r);
  ASSERT_EQ(signalsHandled(dir), 5u) << run;
  EXPECT_NE(r.stderrText.find("ERROR: Skipped too many probes, check MAXSKIPPED"),
            std::string::npos)
      << run;
  EXPECT_NE(r.stderrText.find("WARNING: Number of errors: 0, skipped probes: 5\n"),
            std::string::npos)
      << run;
  EXPECT_NE(r.stderrText.find("Pass 5: run failed"), std::string::npos) << run;
  EXPECT_TRUE(r.exited && r.exitCode == 1) << run;
}

} // namespace
} // namespace sonde::e2e
