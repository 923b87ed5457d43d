// The life of a traced process: detaching restores its code and semaphores,
// a forked child stays traced, so does an exec'd program, and the target's exit
// or crash ends the session through its end probes.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace sonde::e2e {
namespace {

// The target may outlive sonde (detach): wait until it wrote its result line.
std::string waitForResult(const std::string &path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string text;
  while ((text = readFile(path)).empty() || text.back() != '\n') {
    if (std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return text;
}

std::string lifecycle(const std::string &arguments) {
  return std::string(E2E_LIFECYCLE) + " " + arguments;
}

TEST(MarkerLifecycle, DetachRestoresCodeAndSemaphore) {
  ScratchDir dir;
  std::string resultFile = dir.file("result");
  std::string script =
      "global n\n" + markProbe(E2E_LIFECYCLE, "tick", "n++; if (n == 1000) exit()");
  std::string command = lifecycle("detach " + resultFile);
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  // patched=1: the 5-byte NOP was rewritten while attached; the rest: after
  // sonde let go, the semaphore is 0 and the code is the file's again.
  EXPECT_EQ(waitForResult(resultFile), "attached=1 patched=1 detached=1 code_restored=1\n")
      << describeRun(script, command, result);
}

TEST(MarkerLifecycle, ForkedChildIsTraced) {
  ScratchDir dir;
  std::string resultFile = dir.file("result");
  std::string script = "global c\n" + markProbe(E2E_LIFECYCLE, "forked", "c[$arg1]++") +
                       "probe end { printf(\"parent=%d child=%d\\n\", c[0], c[1]) }\n";
  std::string command = lifecycle("fork " + resultFile + " 1000");
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  EXPECT_EQ(readFile(resultFile), "parent=1000 child=1000 child_status=0\n");
  EXPECT_EQ(result.stdoutText, "parent=1000 child=1000\n") << describeRun(script, command, result);
}

// pid() and tid() (cached by the runtime) are the child's own in a fork child,
// though the parent's thread read them before the fork: there pid() is not
// target() and tid() is pid() (its only thread).
TEST(MarkerLifecycle, ForkedChildSeesItsOwnPidAndTid) {
  ScratchDir dir;
  std::string resultFile = dir.file("result");
  std::string script =
      "global c\n" +
      markProbe(E2E_LIFECYCLE, "forked", "c[$arg1, pid() == target(), tid() == pid()]++") +
      "probe end { foreach ([who+, t, main] in c) printf(\"%d %d %d: %d\\n\", who, t, main, "
      "c[who, t, main]) }\n";
  std::string command = lifecycle("fork " + resultFile + " 1000");
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  EXPECT_EQ(result.stdoutText, "0 1 1: 1000\n1 0 1: 1000\n2 1 1: 1\n")
      << describeRun(script, command, result);
}

// -c follows exec: the program the target execs is traced too (ExecFollowTest.cpp
// for wrappers).
TEST(MarkerLifecycle, ExecedProgramIsTraced) {
  ScratchDir dir;
  std::string resultFile = dir.file("result");
  std::string script = "global pre, post\n" + markProbe(E2E_LIFECYCLE, "pre_exec", "pre++") +
                       markProbe(E2E_LIFECYCLE, "post_exec", "post++") +
                       "probe end { printf(\"pre=%d post=%d\\n\", pre, post) }\n";
  std::string command = lifecycle("exec " + resultFile + " 1000");
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  EXPECT_EQ(readFile(resultFile), "after_exec_fired=1000 traced=1\n");
  EXPECT_EQ(result.stdoutText, "pre=1000 post=1000\n") << describeRun(script, command, result);
}

const char *const kCountTicks = "global n\n"
                                "probe process(\"" E2E_LIFECYCLE "\").mark(\"tick\") { n++ }\n"
                                "probe end { printf(\"n=%d\\n\", n) }\n";

// The command's exit ends the session; sonde's own status is 0 unless
// --target-status passes the command's on.
TEST(MarkerLifecycle, TargetExitEndsTheSession) {
  ScratchDir dir;
  std::string command = lifecycle("exit 7 1000");
  auto result = runSonde(kCountTicks, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(kCountTicks, command, result);
  EXPECT_EQ(result.stdoutText, "n=1000\n") << describeRun(kCountTicks, command, result);
  auto passedOn = runSonde(kCountTicks, command, dir.path(), {"--target-status"});
  EXPECT_TRUE(passedOn.exited && passedOn.exitCode == 7)
      << describeRun(kCountTicks, "--target-status " + command, passedOn);
}

TEST(MarkerLifecycle, CrashingTargetIsReported) {
  ScratchDir dir;
  std::string command = lifecycle("crash 1000");
  auto result = runSonde(kCountTicks, command, dir.path(), {"--target-status"});
  ASSERT_TRUE(result.exited) << describeRun(kCountTicks, command, result);
  EXPECT_EQ(result.exitCode, 128 + 11) << describeRun(kCountTicks, command, result);
  EXPECT_EQ(result.stdoutText, "n=1000\n") << describeRun(kCountTicks, command, result);
  EXPECT_NE(result.stderrText.find("killed by signal 11"), std::string::npos)
      << describeRun(kCountTicks, command, result);
}

} // namespace
} // namespace sonde::e2e
