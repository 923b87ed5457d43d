// Lua consumer scripts (--lua): the two examples of docs/lua.md against a real
// target, live and over a recorded trace, and the script's errors reported
// with its file and line without losing records.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

namespace sonde::e2e {
namespace {

const std::string kExamples = std::string(E2E_REPO_DIR) + "/examples/lua/";

// Five records "n=1 who=e2e_stack_fp" ... "n=5 ...".
std::string fiveRecordsScript() {
  return markProbe(E2E_STACK_LIB_FP, "deep", "printf(\"n=%d who=%s\\n\", $arg1, execname())");
}
const std::string kFiveRecords = std::string(E2E_STACK_FP) + " 5";

void writeFile(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

TEST(LuaConsumer, FieldSummaryExampleLive) {
  ScratchDir dir;
  std::string script = fiveRecordsScript();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", kExamples + "field-summary.lua"});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.stdoutText, std::string("process(\"") + E2E_STACK_LIB_FP +
                              "\").mark(\"deep\")\n"
                              "  n            n=5 min=1 avg=3 max=5\n"
                              "  who          1 distinct strings\n");
}

TEST(LuaConsumer, CsvWriterExampleOverARecordedTrace) {
  ScratchDir dir;
  std::string script = fiveRecordsScript(), trace = dir.file("trace");
  auto run = runSonde(script, kFiveRecords, dir.path(), {"-b", "-o", trace});
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, kFiveRecords, run);
  // The target is gone: the script reads the trace. records.csv lands in the
  // working directory.
  auto report =
      test::runProcess(SONDE_BINARY, {"report", trace, "--lua", kExamples + "csv-writer.lua"},
                       dir.path(), std::chrono::seconds(60));
  ASSERT_TRUE(report.exited && report.exitCode == 0) << report.stderrText;
  EXPECT_EQ(report.stdoutText, "5 rows written to records.csv\n");
  std::string csv = readFile(dir.file("records.csv"));
  std::string probe =
      std::string("\"process(\"\"") + E2E_STACK_LIB_FP + "\"\").mark(\"\"deep\"\")\"";
  std::string row = R"([0-9]{19},[0-9]+,[0-9]+,)";
  std::string expected = "time_ns,pid,tid,probe,n,who\n";
  EXPECT_EQ(csv.substr(0, expected.size()), expected);
  std::string rest = csv.substr(std::min(expected.size(), csv.size()));
  for (int n = 1; n <= 5; ++n) {
    size_t nl = rest.find('\n');
    ASSERT_NE(nl, std::string::npos) << csv;
    std::string line = rest.substr(0, nl);
    rest = rest.substr(nl + 1);
    EXPECT_TRUE(line.ends_with("," + probe + "," + std::to_string(n) + ",e2e_stack_fp")) << line;
    EXPECT_TRUE(std::regex_search(line, std::regex("^" + row))) << line;
  }
  EXPECT_EQ(rest, "");
}

TEST(LuaConsumer, AnErrorNamesTheLineAndTheRestIsPrinted) {
  ScratchDir dir;
  std::string lua = dir.file("bad.lua");
  writeFile(lua, "function event(ev)\n"
                 "  local x = nil\n"
                 "  if ev.fields.n == 2 then return x.y end\n"
                 "  print(\"lua\", ev.fields.n)\n"
                 "end\n");
  std::string script = fiveRecordsScript();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", lua});
  ASSERT_TRUE(r.exited) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.exitCode, 1) << "a script that failed fails the run";
  EXPECT_NE(r.stderrText.find(lua + ":3: attempt to index a nil value (local 'x')"),
            std::string::npos)
      << r.stderrText;
  // Nothing lost: records from the failing one on are printed as text.
  EXPECT_EQ(r.stdoutText, "lua\t1\nn=2 who=e2e_stack_fp\nn=3 who=e2e_stack_fp\n"
                          "n=4 who=e2e_stack_fp\nn=5 who=e2e_stack_fp\n");
}

TEST(LuaConsumer, AScriptThatDoesNotLoadStopsBeforeTheTarget) {
  ScratchDir dir;
  std::string lua = dir.file("syntax.lua");
  writeFile(lua, "function event(ev\n");
  std::string script = fiveRecordsScript();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", lua});
  ASSERT_TRUE(r.exited) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find(lua + ":2: ')' expected near <eof>"), std::string::npos)
      << r.stderrText;
  EXPECT_EQ(r.stdoutText, "");
  auto text = runSonde(script, kFiveRecords, dir.path(), {"--transport=text", "--lua", lua});
  EXPECT_EQ(text.exitCode, 1);
  EXPECT_NE(text.stderrText.find("option --lua needs a record transport"), std::string::npos)
      << text.stderrText;
}

} // namespace
} // namespace sonde::e2e
