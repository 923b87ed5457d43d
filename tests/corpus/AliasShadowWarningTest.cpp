// A user global named like a local of a tapset alias the script probes becomes
// that local (stap's rule, kept: `global count probe syscall.read { count++ }`
// adds read's byte counts), and sonde warns, naming the global and the local.
#include "ProcessRunner.h"
#include "ScriptDir.h"
#include "ScriptFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace sonde::test {
namespace {

constexpr std::chrono::seconds kTimeout{30};

ProcessResult sonde(const ScriptDir &dir, const std::vector<std::string> &args) {
  return runProcess(SONDE_BINARY, args, dir.path().string(), kTimeout);
}

const char *kTapset = "probe myalias = begin {\n"
                      "  count = 5\n"
                      "  other = 1\n"
                      "}\n"
                      "probe unused_alias = end {\n"
                      "  seen = 1\n"
                      "}\n";

TEST(AliasShadowWarning, NamesTheGlobalAndTheAliasLocalAndKeepsStapsResult) {
  ScriptDir dir("sonde-shadow");
  dir.write("tap/myalias.probe", kTapset);
  dir.write("app.probe", "global count\nprobe myalias { count++; println(count); exit() }\n");
  auto r = sonde(dir, {"-I", "tap", "app.probe"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "6\n"); // the alias set the global to 5
  EXPECT_EQ(r.stderrText, "WARNING: global 'count' shadows local 'count' of probe alias myalias "
                          "(tap/myalias.probe:2:3): identifier 'count' at app.probe:1:8\n"
                          " source: global count\n"
                          "                ^\n");
}

// One warning per global, however many aliases it takes the local of: the
// first three named, the rest counted.
TEST(AliasShadowWarning, OneWarningPerGlobalForManyAliases) {
  ScriptDir dir("sonde-shadow");
  std::string tapset;
  for (int i = 1; i <= 5; ++i)
    tapset +=
        "probe many.a" + std::to_string(i) + " = begin {\n  count = " + std::to_string(i) + "\n}\n";
  dir.write("tap/many.probe", tapset);
  dir.write("app.probe", "global count\nprobe many.* { count++ }\n");
  auto r = sonde(dir, {"-p2", "-I", "tap", "app.probe"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stderrText, "WARNING: global 'count' shadows local 'count' of 5 probe aliases: "
                          "many.a1 (tap/many.probe:2:3), many.a2 (tap/many.probe:5:3), many.a3 "
                          "(tap/many.probe:8:3) and 2 more: identifier 'count' at app.probe:1:8\n"
                          " source: global count\n"
                          "                ^\n");
}

TEST(AliasShadowWarning, QuietWithoutACollision) {
  ScriptDir dir("sonde-shadow");
  dir.write("tap/myalias.probe", kTapset);
  // `total` is no local of myalias; `seen` is a local of an alias the script
  // does not probe.
  dir.write("app.probe", "global total, seen\nprobe myalias { total++; seen = 2; exit() }\n");
  auto r = sonde(dir, {"-p2", "-I", "tap", "app.probe"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stderrText.find("shadows"), std::string::npos) << r.stderrText;
}

// The line of `count = $count` in syscall.read's alias, from the tapset itself.
std::string syscallReadCountLine() {
  std::istringstream in(
      readFile(std::filesystem::path(SONDE_TEST_DIR) / "../stdlib/syscalls.probe"));
  bool inAlias = false;
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.rfind("probe syscall.read = ", 0) == 0)
      inAlias = true;
    else if (inAlias && line == "  count = $count")
      return std::to_string(n);
    else if (inAlias && line == "}")
      break;
  }
  return "?";
}

TEST(AliasShadowWarning, SyscallReadsCountLocal) {
  ScriptDir dir("sonde-shadow");
  auto r = sonde(dir, {"-p2", "-e", "global count probe syscall.read { count++ }"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  std::string where = "syscalls.probe:" + syscallReadCountLine() +
                      ":3): identifier 'count' at "
                      "<input>:1:8\n";
  EXPECT_EQ(r.stderrText.rfind("WARNING: global 'count' shadows local 'count' of probe alias "
                               "syscall.read (",
                               0),
            0u)
      << r.stderrText;
  EXPECT_NE(r.stderrText.find(where), std::string::npos) << r.stderrText;
  // Still stap's program: the global is the alias's `count`, no local of that name.
  EXPECT_EQ(r.stdoutText.rfind("# globals\ncount:long\n", 0), 0u) << r.stdoutText;
  EXPECT_EQ(r.stdoutText.find("  count:long"), std::string::npos) << r.stdoutText;

  auto quiet = sonde(dir, {"-p2", "-e", "global n probe syscall.read { n++ }"});
  EXPECT_EQ(quiet.exitCode, 0);
  EXPECT_EQ(quiet.stderrText, "");
}

} // namespace
} // namespace sonde::test
