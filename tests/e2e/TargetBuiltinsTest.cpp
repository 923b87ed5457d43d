// Built-ins in marker handlers, which run inside the traced process: what they
// answer about that process (its arguments, its user, user mode, its memory),
// and the requests only sonde carries out (system(), switch_file()), which
// travel to sonde through the segment's mailbox. switch_file() in sonde's own
// probes is here too: it needs an -o file, which golden tests do not have.
#include "MarkerRecords.h"
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace sonde::e2e {
namespace {

std::string argsTarget() { return E2E_ARGS_O2; }

// stap's quoting of a buffer of printable ASCII and 2-byte UTF-8 sequences
// (what e2e_args passes its `strings` marker), its NUL included.
std::string quotedBuffer(const std::string &text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0xC0 && i + 1 < text.size()) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04X",
                    ((c & 0x1F) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F));
      out += code;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\\0\"";
}

TEST(TargetBuiltins, ProcessContextIsTheTargets) {
  ScratchDir dir;
  // An empty argument: cmdline_args shows it as "" (two quotes), as stap does.
  std::string command = argsTarget() + " " + dir.file("records") + " 1 ''";
  std::string script =
      "probe begin { printf(\"zone %s %d\\n\", tz_name(), tz_gmtoff()) }\n" +
      markProbe(
          argsTarget(), "noargs",
          "printf(\"zone %s %d\\n\", tz_name(), tz_gmtoff())\n"
          "println(pgrp(), \" \", sid())\n"
          "println(cmdline_arg(0), \"|\", cmdline_args(1, -1, \",\"), \"|\", cmdline_arg(9))\n"
          "println(user_mode(), is_myproc(), pid() == target(), \" \", pexecname(), \" \",\n"
          "        pid2execname(pid()) == execname(), \" \", pid2execname(stp_pid()))");
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  std::vector<std::string> lines = test::linesOf(result.stdoutText);
  ASSERT_EQ(lines.size(), 5u) << describeRun(script, command, result);
  EXPECT_EQ(lines[1], lines[0]) << "the zone sonde captured at startup, in the target too";
  // Neither sonde nor its -c command changes group or session: both are ours.
  EXPECT_EQ(lines[2], std::to_string(getpgrp()) + " " + std::to_string(getsid(0)));
  EXPECT_EQ(lines[3], argsTarget() + "|" + dir.file("records") + ",1,\"\"|");
  EXPECT_EQ(lines[4], "111 sonde 1 sonde");
}

TEST(TargetBuiltins, UserBufferQuotedReadsTheBufferWithItsNul) {
  ScratchDir dir;
  std::string records = dir.file("records");
  std::string command = argsTarget() + " " + records + " 5";
  // An empty text would read MAXSTRINGLEN - 1 bytes (inlen 0): not of interest.
  std::string script =
      markProbe(argsTarget(), "strings",
                "if ($arg2 > 0) println(user_buffer_quoted($arg1, $arg2 + 1, 200), \" \",\n"
                "                       user_buffer_quoted($arg1, $arg2, 12))");
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  std::string error;
  std::string expected;
  for (const auto &r : readRecords(records, error)) {
    if (r.name != "strings" || r.text.empty())
      continue;
    // Within 12 bytes: "hello" whole; longer ASCII keeps 7 bytes and ends in
    // `"...`; in "caf\u00E9 ..." the escape would not fit whole, so it goes.
    std::string cut = r.text == "hello" ? "\"hello\""
                      : r.text.find('\xc3') == std::string::npos
                          ? "\"" + r.text.substr(0, 7) + "\"..."
                          : "\"caf\"...";
    expected += quotedBuffer(r.text) + " " + cut + "\n";
  }
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(result.stdoutText, expected) << describeRun(script, command, result);
}

TEST(TargetRequests, SystemRunsTheCommandInSonde) {
  ScratchDir dir;
  std::string command = argsTarget() + " " + dir.file("records") + " 3";
  // The third command is longer than a mailbox slot holds (MAXSTRINGLEN is raised for it).
  std::string script =
      "global n\n" + markProbe(argsTarget(), "noargs",
                               "if (++n == 2) system(\"echo command $n ran\")\n"
                               "if (n == 3) system(sprintf(\"echo %600s\", \"long\"))");
  auto result = runSonde(script, command, dir.path(), {"-D", "MAXSTRINGLEN=1024"});
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  // The shell's $n is empty: the text reached sh as the script passed it.
  EXPECT_EQ(result.stdoutText, "command ran\n") << describeRun(script, command, result);
  EXPECT_EQ(result.stderrText.rfind("WARNING: system(): a traced process can pass sonde commands "
                                    "of at most 511 bytes; not run: echo ",
                                    0),
            0u)
      << describeRun(script, command, result);
}

TEST(TargetRequests, SwitchFileMovesTheTargetsOutput) {
  ScratchDir dir;
  std::string out = dir.file("out");
  std::string command = argsTarget() + " " + dir.file("records") + " 5";
  std::string script =
      "global n\n" +
      markProbe(argsTarget(), "noargs", "printf(\"line %d\\n\", ++n); if (n == 2) switch_file()") +
      "probe end { println(\"end\") }\n";
  auto result = runSonde(script, command, dir.path(), {"-o", out});
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  EXPECT_EQ(readFile(out), "line 1\nline 2\n") << describeRun(script, command, result);
  EXPECT_EQ(readFile(out + ".1"), "line 3\nline 4\nline 5\nend\n")
      << describeRun(script, command, result);
}

TEST(TargetRequests, SwitchFileNeedsRecordsWithTargets) {
  ScratchDir dir;
  std::string command = argsTarget() + " " + dir.file("records") + " 1";
  std::string script = markProbe(argsTarget(), "noargs", "switch_file()");
  auto result = runSonde(script, command, dir.path(), {"--transport=text", "-o", dir.file("out")});
  ASSERT_TRUE(result.exited) << describeRun(script, command, result);
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.stderrText,
            "sonde: option -o with switch_file() and -c needs a record transport "
            "(--transport=relay or netlink), not --transport=text\n");
}

// switch_file() in sonde's own probes: output before it stays in the file it
// closes, as with -S (FILE.0, FILE.1) or plain -o (FILE, then FILE.1, FILE.2).
TEST(SondeRequests, SwitchFileRotatesTheOutputFile) {
  ScratchDir dir;
  std::string script = "probe begin { println(\"a\"); switch_file(); println(\"b\"); "
                       "switch_file(); switch_file(); println(\"c\"); exit() }\n"
                       "probe end { println(\"end\") }";
  for (bool parts : {false, true}) {
    std::string out = dir.file(parts ? "parts" : "plain");
    std::vector<std::string> args = {"-o", out, "-e", script};
    if (parts)
      args.insert(args.begin(), {"-S", "1"});
    auto result = test::runProcess(SONDE_BINARY, args, dir.path(), std::chrono::seconds(60));
    ASSERT_TRUE(result.exited && result.exitCode == 0) << result.describe() << result.stderrText;
    std::string first = parts ? out + ".0" : out;
    EXPECT_EQ(readFile(first), "a\n");
    EXPECT_EQ(readFile(out + ".1"), "b\n");
    EXPECT_TRUE(std::filesystem::exists(out + ".2"));
    EXPECT_EQ(readFile(out + ".2"), "");
    EXPECT_EQ(readFile(out + ".3"), "c\nend\n");
  }
}

} // namespace
} // namespace sonde::e2e
