// User backtraces and symbols at a marker: a known call chain (e2e_stack.c ->
// e2e_stack_lib.c) across a PIE executable and a shared library, built with and
// without frame pointers, unwound and symbolized in the target.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

namespace sonde::e2e {
namespace {

using test::linesOf;

struct StackBuild {
  const char *name;
  const char *executable;
  const char *library;
};

const StackBuild kBuilds[] = {
    {"frame_pointers", E2E_STACK_FP, E2E_STACK_LIB_FP},
    {"no_frame_pointers", E2E_STACK_NOFP, E2E_STACK_LIB_NOFP},
};

// The line of SONDE_PROBE(e2e_stack, deep, ...) in e2e_stack_lib.c.
constexpr int kDeepMarkerLine = 11;

std::string canonical(const std::string &path) { return std::filesystem::canonical(path).string(); }

// The lines of `text` that match `pattern`, each as its first capture group and
// second (if any) joined by '|'.
std::vector<std::string> framesMatching(const std::string &text, const std::string &pattern) {
  std::vector<std::string> frames;
  std::regex re(pattern);
  for (const std::string &line : linesOf(text)) {
    std::smatch m;
    if (std::regex_match(line, m, re))
      frames.push_back(m.size() > 2 ? m[1].str() + "|" + m[2].str() : m[1].str());
  }
  return frames;
}

// Runs `script` while `executable` makes one call down its chain; a failure
// describes the run if sonde did not exit cleanly.
::testing::AssertionResult runOnce(const std::string &script, const std::string &executable,
                                   test::ProcessResult &result) {
  ScratchDir dir;
  std::string command = executable + " 1";
  result = runSonde(script, command, dir.path());
  if (result.exited && result.exitCode == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describeRun(script, command, result);
}

class UserStack : public ::testing::TestWithParam<StackBuild> {};

TEST_P(UserStack, PrintedBacktraceNamesTheCallChain) {
  const StackBuild &b = GetParam();
  std::string script = markProbe(b.library, "deep", "print_ubacktrace(); exit()");
  test::ProcessResult result;
  ASSERT_TRUE(runOnce(script, b.executable, result));
  // " 0xADDR : name+0xOFF/0xSIZE [module]", innermost first.
  std::vector<std::string> frames = framesMatching(
      result.stdoutText, R"( 0x[0-9a-f]+ : (\w+)\+0x[0-9a-f]+/0x[0-9a-f]+ \[(.+)\])");
  ASSERT_GE(frames.size(), 4u) << result.stdoutText;
  std::string lib = canonical(b.library), exe = canonical(b.executable);
  EXPECT_EQ(frames[0], "stack_lib_inner|" + lib);
  EXPECT_EQ(frames[1], "stack_lib_middle|" + lib);
  EXPECT_EQ(frames[2], "stack_app_outer|" + exe);
  EXPECT_EQ(frames[3], "main|" + exe);
}

TEST_P(UserStack, AddressAndSymbolFunctionsAgree) {
  const StackBuild &b = GetParam();
  std::string script = markProbe(
      b.library, "deep",
      "println(probefunc(), \" [\", ppfunc(), \"] \", usymname(uaddr()), \" \", "
      "umodname(uaddr()))\n"
      "println(ustack(0) == uaddr(), \" \", sprintf(\"0x%x 0x%x\", ustack(0), ustack(1)) == "
      "ucallers(1))\n"
      "try { ustack(99) } catch (e) { println(e) }\n"
      "println(usymdata(ustack(1)))\n"
      "exit()");
  test::ProcessResult result;
  ASSERT_TRUE(runOnce(script, b.executable, result));
  std::vector<std::string> lines = linesOf(result.stdoutText);
  ASSERT_EQ(lines.size(), 4u) << result.stdoutText;
  std::string lib = canonical(b.library);
  EXPECT_EQ(lines[0], "stack_lib_inner [] stack_lib_inner " + lib);
  EXPECT_EQ(lines[1], "1 1");
  EXPECT_EQ(lines[2], "reached end of stack before unwinding to level 99");
  EXPECT_TRUE(std::regex_match(
      lines[3], std::regex(R"(stack_lib_middle\+0x[0-9a-f]+/0x[0-9a-f]+ \[)" + lib + R"(\])")))
      << lines[3];
}

// The marker's source line, from the DWARF line table (targets built with -g).
TEST_P(UserStack, SourceLineOfTheMarker) {
  const StackBuild &b = GetParam();
  std::string script = markProbe(b.library, "deep",
                                 "println(usymfileline(uaddr()))\n"
                                 "println(usymfile(uaddr()))\n"
                                 "println(usymline(uaddr()))\n"
                                 "println(usymline(8))\n"
                                 "exit()");
  test::ProcessResult result;
  ASSERT_TRUE(runOnce(script, b.executable, result));
  std::vector<std::string> lines = linesOf(result.stdoutText);
  ASSERT_EQ(lines.size(), 4u) << result.stdoutText;
  std::string source = canonical(std::string(E2E_SOURCE_DIR) + "/e2e_stack_lib.c");
  EXPECT_EQ(lines[0], source + ":" + std::to_string(kDeepMarkerLine));
  EXPECT_EQ(lines[1], source);
  EXPECT_EQ(lines[2], std::to_string(kDeepMarkerLine));
  EXPECT_EQ(lines[3], "0x8") << "no line: the address";
}

TEST_P(UserStack, HexStacksSymbolizeLater) {
  const StackBuild &b = GetParam();
  std::string script = markProbe(b.library, "deep",
                                 "s = ucallers(3)\n"
                                 "println(s)\n"
                                 "println(ubacktrace())\n"
                                 "print_ustack(s)\n"
                                 "print(sprint_ustack(s))\n"
                                 "print(sprint_ubacktrace())\n"
                                 "print_ubacktrace_brief()\n"
                                 "exit()");
  test::ProcessResult result;
  ASSERT_TRUE(runOnce(script, b.executable, result));
  std::vector<std::string> lines = linesOf(result.stdoutText);
  ASSERT_GE(lines.size(), 2u) << result.stdoutText;
  // ucallers(3): four addresses, single spaces; ubacktrace(): the whole stack,
  // each address followed by a space, starting with the same four.
  EXPECT_TRUE(std::regex_match(lines[0], std::regex("0x[0-9a-f]+( 0x[0-9a-f]+){3}"))) << lines[0];
  EXPECT_EQ(lines[1].rfind(lines[0] + " ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[1].back(), ' ');
  std::string lib = canonical(b.library), exe = canonical(b.executable);
  std::string data = R"(\w+\+0x[0-9a-f]+/0x[0-9a-f]+ \[.+\])";
  // print_ustack and sprint_ustack: " ADDR : usymdata(ADDR)" for the four.
  std::vector<std::string> saved = framesMatching(
      result.stdoutText, R"( 0x[0-9a-f]+ : (\w+)\+0x[0-9a-f]+/0x[0-9a-f]+ \[(.+)\])");
  std::vector<std::string> chain = {"stack_lib_inner|" + lib, "stack_lib_middle|" + lib,
                                    "stack_app_outer|" + exe, "main|" + exe};
  std::vector<std::string> expected = chain;
  expected.insert(expected.end(), chain.begin(), chain.end());
  EXPECT_EQ(saved, expected) << result.stdoutText;
  // sprint_ubacktrace: "name+0xOFF [basename]"; the brief form: "name+0xOFF".
  std::vector<std::string> simple =
      framesMatching(result.stdoutText, R"((\w+)\+0x[0-9a-f]+ \[(.+)\])");
  ASSERT_GE(simple.size(), 4u) << result.stdoutText;
  EXPECT_EQ(simple[0], "stack_lib_inner|" + std::filesystem::path(lib).filename().string());
  EXPECT_EQ(simple[3], "main|" + std::filesystem::path(exe).filename().string());
  std::vector<std::string> brief = framesMatching(result.stdoutText, R"((\w+)\+0x[0-9a-f]+)");
  ASSERT_GE(brief.size(), 4u) << result.stdoutText;
  EXPECT_EQ(
      std::vector<std::string>(brief.begin(), brief.begin() + 4),
      (std::vector<std::string>{"stack_lib_inner", "stack_lib_middle", "stack_app_outer", "main"}));
}

TEST_P(UserStack, ExecutableMarkerStartsInItsFunction) {
  const StackBuild &b = GetParam();
  std::string script =
      markProbe(b.executable, "shallow", "println(probefunc()); print_ubacktrace_brief(); exit()");
  test::ProcessResult result;
  ASSERT_TRUE(runOnce(script, b.executable, result));
  std::vector<std::string> lines = linesOf(result.stdoutText);
  ASSERT_GE(lines.size(), 3u) << result.stdoutText;
  EXPECT_EQ(lines[0], "stack_app_outer");
  EXPECT_EQ(lines[1].rfind("stack_app_outer+0x", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("main+0x", 0), 0u) << lines[2];
}

INSTANTIATE_TEST_SUITE_P(Builds, UserStack, ::testing::ValuesIn(kBuilds),
                         [](const auto &info) { return std::string(info.param.name); });

// Record transports: the target sends addresses and its object list, sonde
// symbolizes; the lines are the text transport's.
class UserStackRecords : public ::testing::TestWithParam<const char *> {};

TEST_P(UserStackRecords, ConsumerSymbolizesLikeTheTarget) {
  ScratchDir dir;
  std::string script =
      markProbe(E2E_STACK_LIB_NOFP, "deep",
                "println(\"at \", probefunc()); print_ubacktrace(); print_ustack(ucallers(1)); "
                "print_ubacktrace_brief(); exit()");
  std::string command = std::string(E2E_STACK_NOFP) + " 1";
  auto text = runSonde(script, command, dir.path());
  auto records = runSonde(script, command, dir.path(), {std::string("--transport=") + GetParam()});
  ASSERT_TRUE(text.exited && text.exitCode == 0) << describeRun(script, command, text);
  ASSERT_TRUE(records.exited && records.exitCode == 0) << describeRun(script, command, records);
  // Addresses differ between runs (ASLR): compare the symbolized parts.
  std::regex address("0x[0-9a-f]{6,}");
  std::string expected = std::regex_replace(text.stdoutText, address, "ADDR");
  EXPECT_EQ(std::regex_replace(records.stdoutText, address, "ADDR"), expected);
  EXPECT_NE(expected.find(" : stack_lib_middle+0x"), std::string::npos) << expected;
}

INSTANTIATE_TEST_SUITE_P(Transports, UserStackRecords, ::testing::Values("relay", "netlink"));

// A recorded trace carries the objects: `sonde report` symbolizes after the
// target is gone.
TEST(UserStackRecords, RecordedTraceSymbolizesAfterTheTargetEnded) {
  ScratchDir dir;
  std::string script = markProbe(E2E_STACK_LIB_FP, "deep", "print_ubacktrace_brief(); exit()");
  std::string command = std::string(E2E_STACK_FP) + " 1";
  std::string trace = dir.file("trace");
  auto run = runSonde(script, command, dir.path(), {"--transport=relay", "-b", "-o", trace});
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, command, run);
  auto report =
      test::runProcess(SONDE_BINARY, {"report", trace}, dir.path(), std::chrono::seconds(60));
  ASSERT_TRUE(report.exited && report.exitCode == 0) << report.stderrText;
  std::vector<std::string> lines = linesOf(report.stdoutText);
  ASSERT_GE(lines.size(), 4u) << report.stdoutText;
  EXPECT_EQ(lines[0].rfind("stack_lib_inner+0x", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("stack_lib_middle+0x", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("stack_app_outer+0x", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("main+0x", 0), 0u) << lines[3];
}

// A stock <sys/sdt.h> marker (the trap path): the stack from the registers of
// the trap.
TEST(UserStackAtTrap, StockMarkerUnwinds) {
  ScratchDir dir;
  std::string script =
      markProbe(E2E_STOCK, "tick",
                "println(probefunc(), \" \", user_mode()); print_ubacktrace_brief(); exit()");
  std::string command = std::string(E2E_STOCK) + " " + dir.file("records") + " 3";
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  std::vector<std::string> lines = linesOf(result.stdoutText);
  ASSERT_GE(lines.size(), 3u) << describeRun(script, command, result);
  EXPECT_EQ(lines[0], "fire 1") << "user_mode(): the handler runs for user code";
  EXPECT_EQ(lines[1].rfind("fire+0x", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("main+0x", 0), 0u) << lines[2];
}

// -D MAXBACKTRACE bounds every stack the unwinder takes, as in stap.
TEST(UserStackLimit, MaxBacktraceBoundsTheFrames) {
  ScratchDir dir;
  std::string script = markProbe(E2E_STACK_LIB_FP, "deep",
                                 "println(ubacktrace())\n"
                                 "println(ucallers(-1))\n"
                                 "try { ucallers(2) } catch (e) { println(e) }\n"
                                 "exit()");
  std::string command = std::string(E2E_STACK_FP) + " 1";
  auto result = runSonde(script, command, dir.path(), {"-D", "MAXBACKTRACE=2"});
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  std::vector<std::string> lines = linesOf(result.stdoutText);
  ASSERT_EQ(lines.size(), 3u) << result.stdoutText;
  EXPECT_TRUE(std::regex_match(lines[0], std::regex("0x[0-9a-f]+ 0x[0-9a-f]+ "))) << lines[0];
  EXPECT_EQ(lines[1] + " ", lines[0]);
  EXPECT_EQ(lines[2], "reached end of stack before unwinding to level 2") << lines[2];
}

// Probes without a user context: no address, no stack, a note where stap
// prints one.
TEST(UserStackOutsideMarkers, BeginProbeHasNone) {
  ScratchDir dir;
  std::string script = "probe begin { println(uaddr(), \"[\", ubacktrace(), \"][\", probefunc(), "
                       "\"]\"); print_ubacktrace(); exit() }";
  auto result = runSonde(script, std::string(E2E_STACK_FP) + " 1", dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0);
  EXPECT_EQ(result.stdoutText, "0[][]\n<no user backtrace at begin>\n");
}

} // namespace
} // namespace sonde::e2e
