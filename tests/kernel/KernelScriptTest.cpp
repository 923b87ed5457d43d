// `sonde` running kernel.trace scripts against the known workload: loss
// accounting of the ring buffer, many string arguments in one record, a
// program the verifier refuses, the one-line error without privileges. (Values per construct are
// checked by the golden scripts in tests/conformance/kernel.)
#include "KernelScriptSupport.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

using namespace sonde::test;

size_t countLines(const std::string &text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(KernelScript, EveryRecordIsDeliveredOrCountedAsLost) {
  // A 1 MiB ring and 1,000,000 wide records: some may not fit; each one that
  // does not is counted, and the count is reported.
  const int fired = 1000000;
  ProcessResult r = runSonde({"-s", "1", "-e",
                              R"(probe kernel.trace("syscalls:sys_enter_close") {
            if (pid() == target() && execname() == "kernel_workload" && $fd == 4294967295)
              printf("%d %s %s %s\n", $fd, execname(), execname(), execname())
          })",
                              "-c", workload("close " + std::to_string(fired) + " -1 1")});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  // Each line must be a whole record of the workload's (none cut, none added).
  const std::string line = "4294967295 kernel_workload kernel_workload kernel_workload\n";
  size_t delivered = countLines(r.stdoutText);
  size_t whole = 0;
  for (size_t at = r.stdoutText.find(line); at != std::string::npos;
       at = r.stdoutText.find(line, at + line.size()))
    ++whole;
  EXPECT_EQ(whole, delivered) << r.stdoutText.substr(0, 2000);
  size_t lost = 0;
  std::smatch m;
  if (std::regex_search(r.stderrText, m, std::regex("kernel probes lost ([0-9]+) records")))
    lost = std::stoul(m[1]);
  else
    EXPECT_EQ(r.stderrText, "");
  EXPECT_EQ(delivered + lost, static_cast<size_t>(fired)) << describe(r);
}

TEST(KernelScript, RecordsWithManyStringsPassTheVerifier) {
  // 20 strings of MAXSTRINGLEN in one printf: the record's offsets are bounded
  // for the verifier whatever the strings' lengths.
  std::string format, args;
  for (int i = 0; i < 20; ++i) {
    format += "%s|";
    args += ", s";
  }
  ProcessResult r =
      runSonde({"-e",
                "probe kernel.trace(\"syscalls:sys_enter_openat\") { if (pid() != target()) next\n"
                "  s = user_string($filename)\n  printf(\"" +
                    format + "\\n\"" + args + ") }",
                "-c", workload("open /nonexistent/x")});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::string line;
  for (int i = 0; i < 20; ++i)
    line += "/nonexistent/x|";
  EXPECT_EQ(r.stdoutText, line + "\n");
}

TEST(KernelScript, KernelBacktracesAreSymbolizedFromKallsyms) {
  // print_backtrace() and print_stack() in the kernel send addresses; sonde
  // names them. sprint_backtrace() and sprint_stack() name them in the kernel
  // (%pS). All four print the same text as print_stack() in `end`.
  ProcessResult r = runSonde({"-e",
                              R"(global first
probe kernel.trace("syscalls:sys_enter_close") {
  if (pid() != target() || first != "") next
  first = backtrace()
  print_backtrace()
  printf("--\n")
  print_stack(first)
  printf("--\n%s--\n%s", sprint_backtrace(), sprint_stack(first))
}
probe end { println("--"); print_stack(first) })",
                              "-c", workload("close 3 -1 1")});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::vector<std::string> parts;
  std::string rest = r.stdoutText;
  for (size_t split; (split = rest.find("--\n")) != std::string::npos;
       rest = rest.substr(split + 3))
    parts.push_back(rest.substr(0, split));
  parts.push_back(rest);
  ASSERT_EQ(parts.size(), 5u) << r.stdoutText;
  const std::string &printed = parts[0];
  // " 0xADDR : name+0xOFF/0xSIZE [kernel]", from the syscall entry down.
  std::string frame = R"( 0x[0-9a-f]{16} : \w+\+0x[0-9a-f]+/0x[0-9a-f]+ \[[\w.]+\]\n)";
  EXPECT_TRUE(std::regex_match(printed, std::regex("(" + frame + ")+"))) << printed;
  EXPECT_NE(printed.find("do_syscall_64+0x"), std::string::npos) << printed;
  EXPECT_EQ(parts[1], printed) << "print_stack(backtrace()) in the kernel";
  EXPECT_EQ(parts[2], printed) << "sprint_backtrace() in the kernel";
  EXPECT_EQ(parts[3], printed) << "sprint_stack(backtrace()) in the kernel";
  EXPECT_EQ(parts[4], printed) << "print_stack(backtrace()) in end";
}

TEST(KernelScript, SwitchFileFromTheKernelRotatesTheOutputFile) {
  // Each close prints its number, the second one switches first: the records
  // before the switch stay in the file it closes.
  std::string out = "/tmp/sonde-kernel-switch-" + std::to_string(getpid());
  ProcessResult r = runSonde({"-o", out, "-e",
                              R"(global n
probe kernel.trace("syscalls:sys_enter_close") {
  if (pid() != target()) next
  if (++n == 2) switch_file()
  printf("close %d\n", n)
}
probe end { println("end") })",
                              "-c", workload("close 3 -1 1")});
  SKIP_UNLESS_PERMITTED(r);
  auto read = [](const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  std::string first = read(out), second = read(out + ".1");
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".1");
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(first, "close 1\n");
  EXPECT_EQ(second, "close 2\nclose 3\nend\n");
}

TEST(KernelScript, AVerifierRefusalNamesTheProbeAndTheScriptLine) {
  // 400 string appends: more than the verifier's million instructions.
  std::string script = "probe kernel.trace(\"sched:sched_switch\") {\n  s = $prev_comm\n";
  for (int i = 0; i < 400; ++i)
    script += "  s = s . \"x\"\n";
  script += "  println(s)\n}\n";
  ProcessResult r = runSonde({"-e", script, "-c", workload("close 1 -1 1")});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited) << describe(r);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find("the kernel's verifier refused program 'sonde_probe_0' (the "
                              "handler of kernel.trace(\"sched:sched_switch\")):"),
            std::string::npos)
      << describe(r);
  EXPECT_TRUE(
      std::regex_search(r.stderrText, std::regex("\n  at <input>:[0-9]+: s = s \\. \"x\"\n")))
      << describe(r);
  EXPECT_NE(r.stderrText.find("Pass 5: run failed."), std::string::npos);
}

TEST(KernelScript, WithoutPrivilegesOneLineSaysWhatIsNeeded) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to drop to another user";
  if (access("/usr/bin/setpriv", X_OK) != 0)
    GTEST_SKIP() << "setpriv (util-linux) is not installed";
  ProcessResult r = runProcess("/usr/bin/setpriv",
                               {"--reuid=65534", "--regid=65534", "--clear-groups", SONDE_BINARY,
                                "-e", R"(probe kernel.trace("sched:sched_switch") { n++ })"},
                               "/tmp", std::chrono::seconds(60));
  ASSERT_TRUE(r.exited) << describe(r);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find("kernel probes need root"), std::string::npos) << describe(r);
}

TEST(KernelScript, ProbeHitReportCountsEveryKernelHandlerRun) {
  // -t: the kernel handler adds its time to a per-CPU map; the report's hits
  // are exactly the handler's runs, which the script counts too (per CPU).
  ProcessResult r =
      runSonde({"-t", "-e",
                "global n\nprobe kernel.trace(\"syscalls:sys_enter_close\") { n <<< 1 }\n"
                "probe end { printf(\"n=%d\\n\", @count(n)) }",
                "-c", workload("close 1000 -1 1")});
  SKIP_UNLESS_PERMITTED(r);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::smatch count, line;
  ASSERT_TRUE(std::regex_search(r.stdoutText, count, std::regex("n=([0-9]+)\n"))) << r.stdoutText;
  ASSERT_TRUE(std::regex_search(
      r.stdoutText, line,
      std::regex("\nkernel\\.trace\\(\"syscalls:sys_enter_close\"\\), \\(<input>:2:7\\), hits: "
                 "([0-9]+), ns: ([0-9]+)min/([0-9]+)avg/([0-9]+)max, variance: [0-9]+, from: ")))
      << r.stdoutText;
  EXPECT_GE(std::stoll(count[1]), 1000);
  EXPECT_EQ(line[1], count[1]);
  EXPECT_LE(std::stoll(line[2]), std::stoll(line[3]));
  EXPECT_LE(std::stoll(line[3]), std::stoll(line[4]));
}

} // namespace
