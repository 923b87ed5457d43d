// Every diagnostic names its file, line and column, also when the one before it
// named the same file (stap elides the repeated name: "at :1:33"): several
// errors in one script, and errors in a script and in a tapset it uses.
#include "ProcessRunner.h"
#include "ScriptDir.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

constexpr std::chrono::seconds kTimeout{30};

ProcessResult sonde(const ScriptDir &dir, const std::vector<std::string> &args) {
  return runProcess(SONDE_BINARY, args, dir.path().string(), kTimeout);
}

TEST(DiagnosticLocations, TwoErrorsInOneScriptBothNameIt) {
  ScriptDir dir("sonde-diag");
  auto r = sonde(dir, {"-p2", "-e", "probe begin { x = 1 + \"a\" ; y = \"b\" - 2}"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText,
            "semantic error: type mismatch: expected long but found string: string 'a' at "
            "<input>:1:23\n"
            "        source: probe begin { x = 1 + \"a\" ; y = \"b\" - 2}\n"
            "                                      ^\n"
            "\n"
            "semantic error: type mismatch: expected long but found string: string 'b' at "
            "<input>:1:33\n"
            "        source: probe begin { x = 1 + \"a\" ; y = \"b\" - 2}\n"
            "                                                ^\n"
            "\n"
            "Pass 2: analysis failed.  [man error::pass2]\n");
}

TEST(DiagnosticLocations, ErrorsInAScriptAndItsTapsetNameTheirFiles) {
  ScriptDir dir("sonde-diag");
  dir.write("tap/helpers.probe", "function helper() {\n  return 1 + \"x\"\n}\n");
  dir.write("app.probe", "probe begin {\n  println(helper())\n  y = \"b\" - 2\n}\n");
  auto r = sonde(dir, {"-p2", "-I", "tap", "app.probe"});
  EXPECT_EQ(r.exitCode, 1);
  std::string out = r.stderrText;
  // Each error names its own file, whichever was printed before it.
  EXPECT_NE(out.find("string 'x' at tap/helpers.probe:2:14\n"), std::string::npos) << out;
  EXPECT_NE(out.find("string 'b' at app.probe:3:7\n"), std::string::npos) << out;
  EXPECT_EQ(out.find(" at :"), std::string::npos) << out;
}

TEST(DiagnosticLocations, WarningsAndParseErrorsNameTheirFiles) {
  ScriptDir dir("sonde-diag");
  dir.write("warn.probe", "global unused_a\nglobal unused_b\nprobe begin { exit() }\n");
  auto w = sonde(dir, {"-p2", "warn.probe"});
  EXPECT_EQ(w.exitCode, 0) << w.stderrText;
  EXPECT_NE(w.stderrText.find("identifier 'unused_a' at warn.probe:1:8\n"), std::string::npos)
      << w.stderrText;
  EXPECT_NE(w.stderrText.find("identifier 'unused_b' at warn.probe:2:8\n"), std::string::npos)
      << w.stderrText;

  dir.write("parse.probe", "probe begin { x = (1 }\nprobe end { y = (2 }\n");
  auto p = sonde(dir, {"-p1", "parse.probe"});
  EXPECT_EQ(p.exitCode, 1);
  EXPECT_NE(p.stderrText.find("at parse.probe:1:"), std::string::npos) << p.stderrText;
  EXPECT_NE(p.stderrText.find("at parse.probe:2:"), std::string::npos) << p.stderrText;
  EXPECT_EQ(p.stderrText.find(" at :"), std::string::npos) << p.stderrText;
}

} // namespace
} // namespace sonde::test
