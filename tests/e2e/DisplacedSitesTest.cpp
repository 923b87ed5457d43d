// Stock sys/sdt.h sites on the jump path (issue 21), end to end over
// e2e_displaced.S: one hand-written site per relocation kind and two the
// analysis refuses. Each is checked for the path -L gives it, for the values
// the script reads and the target computes with `sonde -c` (both paths), and
// under 100 `-x` attaches to 4 threads looping through all of them.
#include "AttachHarness.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

namespace sonde::e2e {
namespace {

const char *kTarget = E2E_DISPLACED;

// Every site of e2e_displaced.S: its path, as -L says it.
const std::map<std::string, std::string> kPaths = {
    {"copy", "jump (8 bytes displaced)"},
    {"rip_load", "jump (8 bytes displaced)"},
    {"rip_add", "jump (8 bytes displaced)"},
    {"jcc", "jump (6 bytes displaced)"},
    {"jcc_near", "jump (8 bytes displaced)"},
    {"jmp", "jump (6 bytes displaced)"},
    {"ret", "jump (5 bytes displaced)"},
    {"call", "jump (6 bytes displaced)"},
    {"branch_in", "trap"},
    {"indirect", "trap"},
};

// "NAME calls SUM" for every marker, from the script's end probe.
const char *kCountScript = R"(
global calls, sums
probe process("TARGET").provider("displaced").mark("*") { calls[$$name]++; sums[$$name] += $arg1 }
probe end { foreach (name+ in calls) printf("%s %d %d\n", name, calls[name], sums[name]) }
)";

std::string countScript() {
  std::string s = kCountScript;
  s.replace(s.find("TARGET"), 6, kTarget);
  return s;
}

TEST(DisplacedSites, ListingSaysEachSitesPath) {
  ScratchDir dir;
  auto r = test::runProcess(SONDE_BINARY,
                            {"-L", std::string("process(\"") + kTarget + "\").mark(\"*\")"},
                            dir.path(), 60s);
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  for (const auto &[name, path] : kPaths) {
    std::regex line(".*\\.mark\\(\"" + name + "\"\\) \\$arg1:long /\\* " +
                    std::regex_replace(path, std::regex("[()]"), "\\$&") +
                    " at 0x[0-9a-f]+: -8@%rdi(; trap: .*)? \\*/");
    bool found = false;
    std::istringstream lines(r.stdoutText);
    for (std::string l; std::getline(lines, l);)
      found = found || std::regex_match(l, line);
    EXPECT_TRUE(found) << name << ": " << path << "\n" << r.stdoutText;
  }
  EXPECT_NE(r.stdoutText.find("; trap: branch-into-region: "), std::string::npos);
  EXPECT_NE(r.stdoutText.find("; trap: indirect-jump-in-function: "), std::string::npos);
  // --stock-sites=trap: every stock site traps, and says why.
  auto trap = test::runProcess(
      SONDE_BINARY,
      {"--stock-sites=trap", "-L", std::string("process(\"") + kTarget + "\").mark(\"copy\")"},
      dir.path(), 60s);
  EXPECT_NE(trap.stdoutText.find("/* trap at 0x"), std::string::npos) << describe(trap);
  EXPECT_NE(trap.stdoutText.find("; trap: --stock-sites=trap */"), std::string::npos);
}

// Every function computes its value on both paths, and every hit is counted
// with its argument: 1000 calls each, x from -500 to 499.
TEST(DisplacedSites, ValuesAndCountsOnBothPaths) {
  ScratchDir dir;
  auto plain = test::runProcess(kTarget, {"1000"}, dir.path(), 60s);
  ASSERT_EQ(plain.exitCode, 0);
  for (const char *mode : {"jump", "trap"}) {
    auto r = runSonde(countScript(), std::string(kTarget) + " 1000", dir.path(),
                      {std::string("--stock-sites=") + mode});
    ASSERT_TRUE(r.exited && r.exitCode == 0) << mode << ": " << describe(r);
    EXPECT_EQ(r.stderrText, "") << mode;
    std::string expected = plain.stdoutText;
    for (const auto &[name, path] : kPaths)
      expected += name + " 1000 -500\n";
    EXPECT_EQ(r.stdoutText, expected) << mode;
  }
}

// A fork child keeps the patched code and its stubs: its hits count too, and
// its values are right.
TEST(DisplacedSites, ForkChildRunsThroughTheStubs) {
  ScratchDir dir;
  auto plain = test::runProcess(kTarget, {"1000", "fork"}, dir.path(), 60s);
  ASSERT_EQ(plain.exitCode, 0);
  auto r = runSonde(countScript(), std::string(kTarget) + " 1000 fork", dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::string expected = plain.stdoutText;
  for (const auto &[name, path] : kPaths)
    expected += name + " 2000 -1000\n";
  EXPECT_EQ(r.stdoutText, expected);
}

// Four threads loop through every site while sonde attaches and detaches 100
// times: each run counts hits of every site, no thread ever computes a wrong
// value, no site falls back to a trap because a thread stayed inside its
// region, and the code is as in the file after each detach.
TEST(DisplacedSites, HundredAttachesToFourThreadsInTheRegions) {
  ScratchDir dir;
  RunningTarget target(4, kTarget, {"-t", "4"});
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  ASSERT_NE(before.find("code as in its file"), std::string::npos) << before;
  const std::string script = std::string(R"(
global calls
probe process(")") + kTarget +
                             R"(").provider("displaced").mark("*") { calls[$$name]++ }
probe timer.ms(20) { exit() }
probe end { n = 0; foreach (k in calls) n++; printf("sites %d\n", n) }
)";
  for (int cycle = 0; cycle < 100; ++cycle) {
    auto r = attach(script, {"-x", target.pidText()}, dir.path());
    ASSERT_TRUE(r.exited && r.exitCode == 0) << "cycle " << cycle << ": " << describe(r);
    // rip_add is not called by the threads.
    ASSERT_EQ(r.stdoutText, "sites 9\n") << "cycle " << cycle << ": " << describe(r);
    ASSERT_EQ(r.stderrText, "") << "cycle " << cycle;
    // Every byte back once sonde is gone; threads, descriptors and the module
    // (which go shortly after) every tenth cycle.
    ASSERT_TRUE(target.codeAsInFile()) << "cycle " << cycle;
    if (cycle % 10 == 9)
      ASSERT_EQ(target.settledFootprint(before), before) << "cycle " << cycle;
  }
  expectAllThreadsOk(target, 4);
}

} // namespace
} // namespace sonde::e2e
