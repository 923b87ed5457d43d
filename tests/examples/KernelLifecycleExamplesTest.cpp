// examples/lifecycle/ (kernel side): process events of the syscall_mix demo
// target, which runs /bin/true EXECS times, one child after the other, while a
// sleeper thread keeps the target alive SLEEPS x SLEEP_MS ms.
#include "KernelExample.h"

#include <map>
#include <regex>

namespace sonde::examples {
namespace {

TEST(KernelLifecycleExamples, ExecExit) {
  // 1 sleeper x 2 sleeps of 30 ms; 4 children.
  auto r =
      runExample("lifecycle/exec-exit.probe", {"-c", targetCommand("syscall_mix", "0 0 1 2 30 4")});
  SKIP_OR_ASSERT_OK(r);
  // Every line: ms since the start, the event, the pid, the name, the rest.
  auto events = rowsMatching(r.stdoutText, "^ *(\\d+) ms (fork|exec|exit) +(\\d+) (\\S+) +(.*)$");
  ASSERT_GE(events.size(), 2u) << describe(r);
  // The target's own exec comes first; its exit last, after the sleeps.
  EXPECT_EQ(events.front()[1], "exec") << describe(r);
  EXPECT_EQ(events.front()[3], "syscall_mix") << describe(r);
  const std::string target = events.front()[2];
  EXPECT_EQ(events.back()[1], "exit") << describe(r);
  EXPECT_EQ(events.back()[2], target) << describe(r);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(events.back()[4], m, std::regex("status 0 after (\\d+) us")))
      << describe(r);
  EXPECT_GE(std::stoll(m[1].str()), 2 * 30000) << describe(r);

  // Each child: forked by the target, then exec of /bin/true, then exit 0,
  // in that order, the stamps never going back.
  std::map<std::string, std::string> seen; // child pid -> the events so far
  long long last = 0;
  for (const auto &e : events) {
    EXPECT_GE(std::stoll(e[0]), last) << describe(r);
    last = std::stoll(e[0]);
    if (e[1] == "fork") {
      EXPECT_EQ(e[2], target) << describe(r);
      ASSERT_TRUE(std::regex_match(e[4], m, std::regex("-> (\\d+)"))) << describe(r);
      seen[m[1].str()] = "fork";
    } else if (e[2] != target) {
      ASSERT_TRUE(seen.count(e[2])) << e[2] << "\n" << describe(r);
      if (e[1] == "exec")
        EXPECT_EQ(e[4], "/bin/true") << describe(r);
      else
        EXPECT_TRUE(std::regex_match(e[4], std::regex("status 0 after \\d+ us"))) << describe(r);
      seen[e[2]] += " " + e[1];
    }
  }
  EXPECT_EQ(seen.size(), 4u) << describe(r);
  for (const auto &[pid, history] : seen)
    EXPECT_EQ(history, "fork exec exit") << pid << "\n" << describe(r);
}

} // namespace
} // namespace sonde::examples
