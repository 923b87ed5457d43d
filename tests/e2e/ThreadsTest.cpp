// Four threads firing a million markers each: every event is counted, in total
// and per thread, with nothing lost or doubled.
#include "SondeRun.h"

#include <gtest/gtest.h>

namespace sonde::e2e {
namespace {

TEST(MarkerThreads, FourMillionEventsCountedExactly) {
  ScratchDir dir;
  std::string script =
      "global n, per_thread\n" +
      markProbe(E2E_THREADS, "tick", "n <<< 1; per_thread[$arg1] <<< 1") +
      "probe end { printf(\"total %d\\n\", @count(n));\n"
      "  foreach (t+ in per_thread) printf(\"%d %d\\n\", t, @count(per_thread[t])) }\n";
  std::string command = E2E_THREADS;
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  EXPECT_EQ(result.stdoutText,
            "fired 4000000\ntotal 4000000\n0 1000000\n1 1000000\n2 1000000\n3 1000000\n")
      << describeRun(script, command, result);
}

} // namespace
} // namespace sonde::e2e
