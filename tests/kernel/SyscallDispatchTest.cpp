// syscalls:* probes run by call number from raw_syscalls:sys_enter/sys_exit
// (probes/tracepoint/SyscallDispatch.h): every dispatched probe sees its own
// calls with their arguments and return values, exactly as when it is attached
// to its own event, and 32-bit calls reach none of them.
#include "KernelScriptSupport.h"

#include <sstream>
#include <string>

namespace {

using namespace sonde::test;

// Counts the target's calls per event, with the range of $__syscall_nr, and
// the sum of the return values per exit event, for the events `enter` and
// `exit` name (one kernel.trace argument each, globs allowed).
std::string countingScript(const std::string &enter, const std::string &exit) {
  return "global calls, nrs, rets\n"
         "probe " +
         enter +
         " {\n"
         "  if (pid() != target()) next\n"
         "  calls[pp()]++\n"
         "  nrs[pp()] <<< $__syscall_nr\n"
         "}\n"
         "probe " +
         exit +
         " {\n"
         "  if (pid() == target()) rets[pp()] <<< $ret\n"
         "}\n"
         "probe end {\n"
         "  foreach (p+ in calls) printf(\"%s %d nr=%d..%d\\n\", p, calls[p], @min(nrs[p]), "
         "@max(nrs[p]))\n"
         "  foreach (p+ in rets) printf(\"%s %d ret=%d\\n\", p, @count(rets[p]), @sum(rets[p]))\n"
         "}\n";
}

// The lines of `text` that mention one of `events`, in order.
std::string linesOf(const std::string &text, const std::vector<std::string> &events) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    for (const std::string &e : events)
      if (line.find("_" + e + "\")") != std::string::npos)
        out += line + "\n";
  return out;
}

const char kDispatchedEnter[] = "360 syscalls:sys_enter_* run by call number";

TEST(SyscallDispatch, DispatchedProbesSeeTheirOwnCallsArgumentsAndResults) {
  // close, fstat (event newfstat), uname (newuname), cachestat (newer than the
  // build's headers), dup, lseek: 7 calls each, all failing.
  const std::string calls = workload("calls 7 3 5 63 451 32 8");
  ProcessResult all = runSonde({"-v", "-e",
                                countingScript(R"(kernel.trace("syscalls:sys_enter_*"))",
                                               R"(kernel.trace("syscalls:sys_exit_*"))"),
                                "-c", calls});
  SKIP_UNLESS_PERMITTED(all);
  ASSERT_TRUE(all.exited && all.exitCode == 0) << describe(all);
  EXPECT_NE(all.stderrText.find(kDispatchedEnter), std::string::npos) << all.stderrText;
  EXPECT_NE(all.stderrText.find("syscalls:sys_exit_* run by call number"), std::string::npos);

  const std::vector<std::string> events = {"close",     "newfstat", "newuname",
                                           "cachestat", "dup",      "lseek"};
  const std::string seen = linesOf(all.stdoutText, events);
  // EBADF (-9) from close(-1), fstat(-1), dup(-1), lseek(-1); EFAULT (-14)
  // from uname((void *)-1).
  EXPECT_NE(seen.find("sys_enter_close\") 7 nr=3..3\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_enter_newfstat\") 7 nr=5..5\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_enter_newuname\") 7 nr=63..63\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_enter_cachestat\") 7 nr=451..451\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_enter_dup\") 7 nr=32..32\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_enter_lseek\") 7 nr=8..8\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_exit_close\") 7 ret=-63\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_exit_newfstat\") 7 ret=-63\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_exit_newuname\") 7 ret=-98\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_exit_dup\") 7 ret=-63\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("sys_exit_lseek\") 7 ret=-63\n"), std::string::npos) << seen;

  // The same events alone stay on their own events: the same lines.
  std::string enter, exit;
  for (const std::string &e : events) {
    enter +=
        std::string(enter.empty() ? "" : ", ") + "kernel.trace(\"syscalls:sys_enter_" + e + "\")";
    exit += std::string(exit.empty() ? "" : ", ") + "kernel.trace(\"syscalls:sys_exit_" + e + "\")";
  }
  ProcessResult own = runSonde({"-v", "-e", countingScript(enter, exit), "-c", calls});
  ASSERT_TRUE(own.exited && own.exitCode == 0) << describe(own);
  EXPECT_EQ(own.stderrText.find("run by call number"), std::string::npos) << own.stderrText;
  EXPECT_EQ(linesOf(own.stdoutText, events), seen);
}

TEST(SyscallDispatch, TwoProbesOnOneCallStayOnItsEventInScriptOrder) {
  // close has two probes: both stay on sys_enter_close (run in script order);
  // the other calls are dispatched.
  ProcessResult r = runSonde({"-v", "-e",
                              R"S(global order, others
          probe kernel.trace("syscalls:sys_enter_close") { if (pid() == target()) order .= "a" }
          probe kernel.trace("syscalls:sys_enter_*") {
            if (pid() != target()) next
            if (pp() == "kernel.trace(\"syscalls:sys_enter_close\")") order .= "b"
            else if ($__syscall_nr == 32) others++
          }
          probe end { printf("%s %d\n", substr(order, 0, 6), others) })S",
                              "-c", workload("calls 3 3 32")});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, "ababab 3\n");
  EXPECT_NE(r.stderrText.find("359 syscalls:sys_enter_* run by call number"), std::string::npos)
      << r.stderrText;
}

TEST(SyscallDispatch, ThirtyTwoBitCallsReachNoProbe) {
  // compat_workload makes 1,000 ia32 read(-1) calls, number 3 (close on
  // x86-64), then ia32 exit, number 1 (write): the per-call events ignore ia32
  // calls, and so does the dispatcher.
  ProcessResult r = runSonde({"-v", "-e",
                              R"(global n
          probe kernel.trace("syscalls:sys_enter_*") {
            if (pid() == target() && execname() == "compat_workload") n[pp()]++
          }
          probe end { foreach (p in n) printf("%s %d\n", p, n[p]) })",
                              "-c", COMPAT_WORKLOAD});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_NE(r.stderrText.find(kDispatchedEnter), std::string::npos) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "");
}

} // namespace
