// Four threads firing a million markers each: every event is counted, with
// nothing lost or doubled, in a global statistic and in per-thread ones.
#include "SondeRun.h"

#include <gtest/gtest.h>

namespace sonde::e2e {
namespace {

void expectCounts(const std::string &script, const std::string &expected) {
  ScratchDir dir;
  std::string command = E2E_THREADS;
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  EXPECT_EQ(result.stdoutText, expected) << describeRun(script, command, result);
}

TEST(MarkerThreads, FourMillionEventsInOneStatistic) {
  expectCounts("global n\n" + markProbe(E2E_THREADS, "tick", "n <<< 1") +
                   "probe end { printf(\"total %d\\n\", @count(n)) }\n",
               "fired 4000000\ntotal 4000000\n");
}

// Statistics in an array are per-thread too (stap: per-CPU), so no event may
// be skipped for contention.
TEST(MarkerThreads, OneMillionEventsPerThreadInAnArrayOfStatistics) {
  expectCounts("global per_thread\n" + markProbe(E2E_THREADS, "tick", "per_thread[$arg1] <<< 1") +
                   "probe end { foreach (t+ in per_thread) printf(\"%d %d\\n\", t, "
                   "@count(per_thread[t])) }\n",
               "fired 4000000\n0 1000000\n1 1000000\n2 1000000\n3 1000000\n");
}

// A global scalar takes the global's lock in every handler: a holder the
// scheduler preempts is waited for, so no event is skipped.
TEST(MarkerThreads, FourMillionIncrementsOfALockedGlobal) {
  expectCounts("global n\n" + markProbe(E2E_THREADS, "tick", "n++") +
                   "probe end { printf(\"total %d\\n\", n) }\n",
               "fired 4000000\ntotal 4000000\n");
}

} // namespace
} // namespace sonde::e2e
