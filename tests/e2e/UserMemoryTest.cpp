// user_* reads of the traced process's memory from marker handlers (5-byte
// sites and the trap path), which the agent does in place (runtime/session/
// UserCopy.h, runtime/agent/SignalActions.h): a valid string, and NULL, an
// unmapped page, a PROT_NONE guard page, a kernel and a non-canonical address,
// a range wrapping past 2^64, strings ending right before an unmapped page
// with and without their NUL and before a guard page, a file mapping past its
// end (SIGBUS). Each gives the
// value or exactly its script error / fallback text, the target runs on to its
// own exit status and output; the same reads from a thread with SIGSEGV and
// SIGBUS blocked and from a handler blocking them (read with process_vm_readv)
// print the same; the program's own SIGSEGV handler, installed after start
// (through libc, or with the system call), still gets its own faults.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>

namespace sonde::e2e {
namespace {

std::string target() { return E2E_USER_MEMORY; }

// Every user_* form on the address in $arg2; errors caught and printed.
std::string script() {
  return "probe process(\"" + target() + "\").mark(\"read\"), process(\"" + target() +
         "\").mark(\"stock_read\") {\n"
         "  try { s = user_string($arg2) } catch (msg) { s = \"ERROR \" . msg }\n"
         "  try { n = user_string_n($arg2, 5) } catch (msg) { n = \"ERROR \" . msg }\n"
         "  try { e = sprint(user_long_error($arg2)) } catch (msg) { e = \"ERROR \" . msg }\n"
         "  printf(\"%s %s %s|%s|%s|%s|%s|%s|%d|%d|%s|%s\\n\", user_string($arg3), $$name,\n"
         "         user_string($arg1), s, n, user_string($arg2, \"<bad>\"),\n"
         "         user_string_quoted($arg2), user_string_n_quoted($arg2, 6), user_char($arg2),\n"
         "         user_long($arg2), e, user_buffer_quoted($arg2, 24, 60))\n"
         "}\n";
}

struct Case {
  std::string label;
  std::string hex;
};

// The target's `case LABEL 0xADDRESS` lines, in order.
std::vector<Case> casesOf(const std::string &outText) {
  std::vector<Case> cases;
  for (const std::string &line : test::linesOf(outText)) {
    std::istringstream words(line);
    std::string word;
    Case c;
    if (words >> word && word == "case" && words >> c.label >> c.hex)
      cases.push_back(c);
  }
  return cases;
}

long long firstLong(const std::string &text) {
  long long value = 0;
  std::memcpy(&value, text.data(), std::min(sizeof value, text.size() + 1));
  return value;
}

// What the script prints for a case, as the process_vm_readv path always has.
std::string expectedFields(const Case &c) {
  static const std::map<std::string, std::string> texts = {
      {"valid32", "a 32-byte string, read in place."},
      {"edge-nul", "edge with its NUL"},
      {"edge-open", "edge without a NUL"},
      {"edge-guard", "edge of the guard"}};
  auto known = texts.find(c.label);
  std::string stringFault = "ERROR user string copy fault -14 at " + c.hex + " [man error::fault]";
  if (known == texts.end()) // unreadable from its first byte
    return c.label + "|" + stringFault + "|" + stringFault + "|<bad>|" + c.hex + "|" + c.hex +
           "|0|0|ERROR read fault [man error::fault] at " + c.hex + "|" + c.hex;
  const std::string &text = known->second;
  // edge-open and edge-guard run into an unreadable page before any NUL: a
  // fault for the whole string, its first bytes still read; a buffer read
  // past it, the address.
  bool whole = c.label == "valid32" || c.label == "edge-nul";
  bool bufferReadable = c.label == "valid32";
  std::string longText = std::to_string(firstLong(text));
  return c.label + "|" + (whole ? text : stringFault) + "|" + text.substr(0, 5) + "|" +
         (whole ? text : "<bad>") + "|" + (whole ? "\"" + text + "\"" : c.hex) + "|\"" +
         text.substr(0, 6) + "\"|" + std::to_string(static_cast<int>(text[0])) + "|" + longText +
         "|" + longText + "|" + (bufferReadable ? "\"" + text.substr(0, 24) + "\"" : c.hex);
}

struct UserMemoryRun {
  test::ProcessResult result;
  std::string description;
  std::string targetOut;
  std::vector<Case> cases;
  // where -> lines (without the where), in order.
  std::map<std::string, std::vector<std::string>> printed;
};

UserMemoryRun run(const std::string &mode) {
  ScratchDir dir;
  UserMemoryRun r;
  std::string command = target() + " " + mode + " " + dir.file("out");
  // The stock marker on the trap path whatever its code allows: handlers in
  // the agent's SIGTRAP handler, next to the sonde marker's stub.
  r.result = runSonde(script(), command, dir.path(), {"--stock-sites=trap"});
  r.description = describeRun("--stock-sites=trap " + script(), command, r.result);
  r.targetOut = readFile(dir.file("out"));
  r.cases = casesOf(r.targetOut);
  for (const std::string &line : test::linesOf(r.result.stdoutText)) {
    size_t space = line.find(' ');
    r.printed[line.substr(0, space)].push_back(line.substr(space + 1));
  }
  return r;
}

// Both markers' lines for every case, in the order the target fires them.
std::vector<std::string> expectedLines(const std::vector<Case> &cases) {
  std::vector<std::string> lines;
  for (const Case &c : cases) {
    lines.push_back("read " + expectedFields(c));
    lines.push_back("stock_read " + expectedFields(c));
  }
  return lines;
}

void expectCompleted(const UserMemoryRun &r) {
  ASSERT_TRUE(r.result.exited && r.result.exitCode == 0) << r.description << r.targetOut;
  EXPECT_NE(r.targetOut.find("done 0\n"), std::string::npos) << r.targetOut;
  ASSERT_EQ(r.cases.size(), 11u) << r.targetOut;
}

TEST(UserMemory, BadAddressesGiveTheScriptErrorsAndTheTargetRunsOn) {
  UserMemoryRun r = run("plain");
  expectCompleted(r);
  EXPECT_EQ(r.printed["main"], expectedLines(r.cases)) << r.description;
}

TEST(UserMemory, ThreadWithFaultSignalsBlockedReadsTheSame) {
  UserMemoryRun r = run("blocked");
  expectCompleted(r);
  std::vector<std::string> expected = expectedLines(r.cases);
  EXPECT_EQ(r.printed["main"], expected) << r.description;
  EXPECT_EQ(r.printed["blocked"], expected) << r.description;
  EXPECT_EQ(r.printed["after"], expected) << r.description;
}

TEST(UserMemory, HandlerBlockingEverySignalReadsTheSame) {
  UserMemoryRun r = run("nested");
  expectCompleted(r);
  std::vector<std::string> expected = expectedLines(r.cases);
  EXPECT_EQ(r.printed["main"], expected) << r.description;
  EXPECT_EQ(r.printed["nested"], expected) << r.description;
  EXPECT_EQ(r.printed["after"], expected) << r.description;
}

TEST(UserMemory, ForkChildReadsTheSame) {
  UserMemoryRun r = run("fork");
  expectCompleted(r);
  std::vector<std::string> expected = expectedLines(r.cases);
  EXPECT_EQ(r.printed["main"], expected) << r.description;
  EXPECT_EQ(r.printed["child"], expected) << r.description;
  EXPECT_EQ(r.printed["after"], expected) << r.description;
}

TEST(UserMemory, ProgramsOwnSegvHandlerStillGetsItsFaults) {
  UserMemoryRun r = run("handler");
  expectCompleted(r);
  // The target checked that sigaction reports its handler and that it ran
  // for its two faults (before and after the markers).
  EXPECT_NE(r.targetOut.find("own faults 2\n"), std::string::npos) << r.targetOut;
  EXPECT_EQ(r.printed["main"], expectedLines(r.cases)) << r.description;
}

TEST(UserMemory, HandlerSetPastLibcIsSeenAndReadsTakeTheSystemCall) {
  // rt_sigaction called directly replaces the agent's handler without it
  // knowing; it checks the kernel's actions before trusting a thread's mask.
  UserMemoryRun r = run("raw");
  expectCompleted(r);
  EXPECT_NE(r.targetOut.find("own faults 2\n"), std::string::npos) << r.targetOut;
  EXPECT_EQ(r.printed["main"], expectedLines(r.cases)) << r.description;
}

} // namespace
} // namespace sonde::e2e
