// examples/syscalls/: system calls counted, failed, timed and opened by the
// syscall_mix demo target, whose calls are known exactly (CLOSES close(-1) ->
// EBADF, MISSING opens of a missing file -> ENOENT, SLEEPERS threads doing
// SLEEPS nanosleeps of SLEEP_MS ms, EXECS children running /bin/true).
#include "KernelExample.h"

#include <gtest/gtest.h>

#include <set>

namespace sonde::examples {
namespace {

// The command the raw_syscalls examples trace.
std::vector<std::string> withNames(const std::string &targetArgs) {
  return {"-c", targetCommand("syscall_mix", targetArgs)};
}

TEST(SyscallExamples, SyscallCounts) {
  // 2 sleepers x 3 sleeps; the top 100 holds every pair.
  auto r = runExample("syscalls/syscall-counts.probe", withNames("23 4 2 3 10 1"), {"100"});
  SKIP_OR_ASSERT_OK(r);
  auto count = [&](const std::string &thread, const std::string &call) {
    return numberAfter(r.stdoutText, "^" + thread + " +" + call + " +(\\d+)$").value_or(-1);
  };
  EXPECT_EQ(count("mix-sleeper", "clock_nanosleep"), 6) << describe(r);
  EXPECT_EQ(count("syscall_mix", "wait4"), 1) << describe(r);
  // The dynamic loader closes a few descriptors of its own.
  EXPECT_GE(count("syscall_mix", "close"), 23) << describe(r);
  EXPECT_LE(count("syscall_mix", "close"), 30) << describe(r);
  EXPECT_GE(count("syscall_mix", "openat"), 4) << describe(r);
  EXPECT_GT(numberAfter(r.stdoutText, "^(\\d+) system calls$").value_or(0), 23 + 4 + 6 + 1);
}

TEST(SyscallExamples, SyscallErrors) {
  auto r = runExample("syscalls/syscall-errors.probe", withNames("37 11 1 1 1 1"));
  SKIP_OR_ASSERT_OK(r);
  auto rows = rowsMatching(r.stdoutText, "^(\\S+) +(\\S+) +(E[A-Z0-9]+) +(\\d+)$");
  long long ebadf = -1, enoent = -1;
  for (const auto &row : rows) {
    if (row[0] != "syscall_mix")
      continue;
    if (row[1] == "close")
      EXPECT_EQ(row[2], "EBADF") << describe(r);
    if (row[1] == "close" && row[2] == "EBADF")
      ebadf = std::stoll(row[3]);
    if (row[1] == "openat" && row[2] == "ENOENT")
      enoent = std::stoll(row[3]);
  }
  EXPECT_EQ(ebadf, 37) << describe(r);
  EXPECT_EQ(enoent, 11) << describe(r);
  EXPECT_GE(numberAfter(r.stdoutText, "^(\\d+) of \\d+ system calls failed$").value_or(0), 48);
}

TEST(SyscallExamples, SyscallLatency) {
  // 2 sleepers x 3 sleeps of 20 ms; 2 children waited for.
  auto r = runExample("syscalls/syscall-latency.probe", withNames("1 1 2 3 20 2"));
  SKIP_OR_ASSERT_OK(r);
  auto rows =
      rowsMatching(r.stdoutText, "^clock_nanosleep +(\\d+) +(\\d+) +(\\d+) +(\\d+) +(\\d+)$");
  ASSERT_EQ(rows.size(), 1u) << describe(r);
  EXPECT_EQ(std::stoll(rows[0][0]), 6) << describe(r);
  // No sleep returns early; none takes a second, even on a busy machine.
  EXPECT_GE(std::stoll(rows[0][1]), 20000) << describe(r);
  EXPECT_LT(std::stoll(rows[0][3]), 1000000) << describe(r);
  EXPECT_GE(std::stoll(rows[0][4]), 6 * 20000) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^wait4 +(\\d+) ").value_or(-1), 2) << describe(r);
  // The most time is spent sleeping: its histogram comes first, the 6 sleeps
  // in the 16-32 ms bucket (20 ms and up to 12 ms late).
  EXPECT_NE(r.stdoutText.find("\nclock_nanosleep (us):\n"), std::string::npos) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^ *16384 \\|@* +(\\d+)$").value_or(-1), 6) << describe(r);
}

TEST(SyscallExamples, FileOpens) {
  auto r =
      runExample("syscalls/file-opens.probe", {"-c", targetCommand("syscall_mix", "1 7 0 0 0 3")});
  SKIP_OR_ASSERT_OK(r);
  // Every failed open of the missing file, by the target, flagged ENOENT.
  auto failed = rowsMatching(r.stdoutText, "^ *(\\d+) syscall_mix +FAIL ENOENT +(\\S+)$");
  ASSERT_EQ(failed.size(), 7u) << describe(r);
  for (const auto &row : failed)
    EXPECT_EQ(row[1], "/nonexistent/sonde-syscall-mix") << describe(r);
  // The summary: the target's failures, and the 3 children (each its own
  // process, running /bin/true) whose opens all succeeded.
  auto summary = rowsMatching(r.stdoutText, "^ *(\\d+) (\\S+) +(\\d+) +(\\d+)$");
  std::set<std::string> children;
  for (const auto &row : summary) {
    if (row[1] == "syscall_mix") {
      EXPECT_EQ(row[0], failed[0][0]) << describe(r);
      EXPECT_GE(std::stoll(row[2]), 7) << describe(r);
      EXPECT_EQ(std::stoll(row[3]), 7) << describe(r);
    } else if (row[1] == "true") {
      children.insert(row[0]);
      EXPECT_GE(std::stoll(row[2]), 1) << describe(r);
      EXPECT_EQ(std::stoll(row[3]), 0) << describe(r);
    }
  }
  EXPECT_EQ(children.size(), 3u) << describe(r);
}

} // namespace
} // namespace sonde::examples
