// examples/sched/: scheduler events of the syscall_mix demo target, whose
// SLEEPERS threads (named "mix-sleeper") each sleep SLEEPS times for SLEEP_MS
// ms: at least that long off the CPU, woken and switched out that often.
#include "KernelExample.h"

#include <set>

namespace sonde::examples {
namespace {

// 2 sleepers x 4 sleeps of 20 ms; no closes, opens or children.
const std::string kMix = "0 0 2 4 20 0";

// The table rows of the mix-sleeper threads: TID, then the numbers.
std::vector<std::vector<std::string>> sleeperRows(const test::ProcessResult &r,
                                                  const std::string &numbers) {
  return rowsMatching(r.stdoutText, "^ *(\\d+) mix-sleeper +" + numbers + "$");
}

TEST(SchedExamples, OffcpuTime) {
  auto r = runExample("sched/offcpu-time.probe", {"-c", targetCommand("syscall_mix", kMix)});
  SKIP_OR_ASSERT_OK(r);
  auto rows = sleeperRows(r, "(\\d+) +(\\d+) +(\\d+)");
  ASSERT_EQ(rows.size(), 2u) << describe(r);
  EXPECT_NE(rows[0][0], rows[1][0]) << describe(r);
  for (const auto &row : rows) {
    // Each sleep is one stretch off the CPU, as long as the sleep (less the
    // few microseconds between arming the timer and switching out).
    EXPECT_GE(std::stoll(row[1]), 4) << describe(r);
    EXPECT_GE(std::stoll(row[2]), 4 * 19900) << describe(r);
    EXPECT_GE(std::stoll(row[3]), 19900) << describe(r);
    EXPECT_LT(std::stoll(row[3]), 1000000) << describe(r);
  }
  // The main thread waits for the sleepers to end: about as long off the CPU.
  EXPECT_GE(numberAfter(r.stdoutText, "^ *\\d+ syscall_mix +\\d+ +(\\d+) ").value_or(0), 4 * 19900)
      << describe(r);
  EXPECT_NE(r.stdoutText.find("mix-sleeper (" + rows[0][0] + "), off-CPU stretches (us):"),
            std::string::npos)
      << describe(r);
}

TEST(SchedExamples, RunqueueLatency) {
  auto r = runExample("sched/runqueue-latency.probe", {"-c", targetCommand("syscall_mix", kMix)});
  SKIP_OR_ASSERT_OK(r);
  auto rows = sleeperRows(r, "(\\d+) +(\\d+) +(\\d+)");
  ASSERT_EQ(rows.size(), 2u) << describe(r);
  for (const auto &row : rows) {
    // Woken once after each sleep (and maybe preempted): waits of at most a
    // busy machine's scheduling delay.
    EXPECT_GE(std::stoll(row[1]), 4) << describe(r);
    EXPECT_LE(std::stoll(row[2]), std::stoll(row[3])) << describe(r);
    EXPECT_LT(std::stoll(row[3]), 1000000) << describe(r);
  }
}

TEST(SchedExamples, ContextSwitches) {
  auto r = runExample("sched/context-switches.probe", {"-c", targetCommand("syscall_mix", kMix)});
  SKIP_OR_ASSERT_OK(r);
  auto rows = sleeperRows(r, "(\\d+) +(\\d+)");
  ASSERT_EQ(rows.size(), 2u) << describe(r);
  std::set<std::string> tids;
  for (const auto &row : rows) {
    tids.insert(row[0]);
    // A voluntary switch per sleep, and the last one when the thread exits.
    EXPECT_GE(std::stoll(row[1]), 4 + 1) << describe(r);
    EXPECT_LT(std::stoll(row[1]), 50) << describe(r);
  }
  EXPECT_EQ(tids.size(), 2u) << describe(r);
  // The main thread blocks joining the sleepers.
  EXPECT_GE(numberAfter(r.stdoutText, "^ *\\d+ syscall_mix +(\\d+) +\\d+$").value_or(0), 1)
      << describe(r);
}

} // namespace
} // namespace sonde::examples
