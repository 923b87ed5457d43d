// Lua consumer scripts (--lua): the two examples of docs/lua.md against a real
// target, live and over a recorded trace; the order of the script's output
// among sonde's; -o; and the script's errors reported with its file and line
// without losing records.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

namespace sonde::e2e {
namespace {

const std::string kExamples = std::string(E2E_REPO_DIR) + "/examples/lua/";
const std::string kDeep = std::string("process(\"") + E2E_STACK_LIB_FP + "\").mark(\"deep\")";

// Five records "n=1 who=e2e_stack_fp" ... "n=5 ...", each from the one thread
// of the target.
std::string fiveRecordsScript() {
  return markProbe(E2E_STACK_LIB_FP, "deep", "printf(\"n=%d who=%s\\n\", $arg1, execname())");
}
const std::string kFiveRecords = std::string(E2E_STACK_FP) + " 5";

void writeFile(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

int64_t realtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `sonde -b -o DIR/trace` of the five records; the trace directory.
std::string recordFive(const ScratchDir &dir) {
  std::string script = fiveRecordsScript(), trace = dir.file("trace");
  auto run = runSonde(script, kFiveRecords, dir.path(), {"-b", "-o", trace});
  EXPECT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, kFiveRecords, run);
  return trace;
}

test::ProcessResult report(const ScratchDir &dir, const std::vector<std::string> &args) {
  return test::runProcess(SONDE_BINARY, args, dir.path(), std::chrono::seconds(60));
}

const std::string kSummary = kDeep + "\n"
                                     "  n            n=5 min=1 avg=3 max=5\n"
                                     "  who          1 distinct strings\n";

// csv-writer.lua's file for the five records: a header, then one row each with
// the time within [from, to], ordered, and pid == tid (one thread).
void expectFiveRows(const std::string &csv, int64_t from, int64_t to) {
  std::vector<std::string> lines = test::linesOf(csv);
  ASSERT_EQ(lines.size(), 6u) << csv;
  EXPECT_EQ(lines[0], "time_ns,pid,tid,probe,n,who");
  std::string probe = std::regex_replace(kDeep, std::regex("\""), "\"\"");
  std::regex row("^([0-9]+),([0-9]+),([0-9]+),\"(.*)\",([0-9]+),e2e_stack_fp$");
  int64_t last = from;
  for (int n = 1; n <= 5; ++n) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[n], m, row)) << lines[n];
    int64_t time = std::stoll(m[1]);
    EXPECT_LE(last, time) << lines[n];
    EXPECT_LE(time, to) << lines[n];
    last = time;
    EXPECT_EQ(m[2], m[3]) << lines[n];
    EXPECT_EQ(m[4], probe);
    EXPECT_EQ(m[5], std::to_string(n));
  }
}

TEST(LuaConsumer, FieldSummaryExampleLiveAndOverARecordedTrace) {
  ScratchDir dir;
  std::string script = fiveRecordsScript();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", kExamples + "field-summary.lua"});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.stdoutText, kSummary);

  std::string trace = recordFive(dir);
  auto replay = report(dir, {"report", trace, "--lua", kExamples + "field-summary.lua"});
  ASSERT_TRUE(replay.exited && replay.exitCode == 0) << replay.stderrText;
  EXPECT_EQ(replay.stdoutText, kSummary);
  auto toFile = report(
      dir, {"report", trace, "--lua", kExamples + "field-summary.lua", "-o", dir.file("summary")});
  ASSERT_TRUE(toFile.exited && toFile.exitCode == 0) << toFile.stderrText;
  EXPECT_EQ(toFile.stdoutText, "");
  EXPECT_EQ(readFile(dir.file("summary")), kSummary);
}

TEST(LuaConsumer, CsvWriterExampleLiveAndOverARecordedTrace) {
  ScratchDir dir;
  std::string script = fiveRecordsScript();
  int64_t from = realtimeNs();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", kExamples + "csv-writer.lua"});
  int64_t to = realtimeNs();
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.stdoutText, "5 rows written to records.csv\n");
  expectFiveRows(readFile(dir.file("records.csv")), from, to);

  // The target is gone: the script reads the trace.
  std::remove(dir.file("records.csv").c_str());
  from = realtimeNs();
  std::string trace = recordFive(dir);
  to = realtimeNs();
  auto replay = report(dir, {"report", trace, "--lua", kExamples + "csv-writer.lua"});
  ASSERT_TRUE(replay.exited && replay.exitCode == 0) << replay.stderrText;
  EXPECT_EQ(replay.stdoutText, "5 rows written to records.csv\n");
  expectFiveRows(readFile(dir.file("records.csv")), from, to);
}

TEST(LuaConsumer, TheScriptsOutputKeepsItsPlaceAndOwnsDashO) {
  ScratchDir dir;
  std::string lua = dir.file("order.lua");
  writeFile(lua, "function begin() print('lua begin') end\n"
                 "function event(ev)\n"
                 "  if ev.text then io.write('text ', ev.text) return end\n"
                 "  print(ev.probe == 'begin' and 'begin' or ev.probe == 'end' and 'end'\n"
                 "        or ev.probe == [[" +
                     kDeep +
                     "]] and 'deep' or ev.probe, ev.args[1], ev.cpu)\n"
                     "end\n"
                     "function finish() print('lua finish') end\n");
  std::string script = "probe begin { printf(\"%d\\n\", 0) }\n" + fiveRecordsScript() +
                       "probe end { printf(\"%d\\n\", 6) println(\"bye\") }\n";
  std::string expected = "lua begin\nbegin\t0\tnil\n"
                         "deep\t1\tnil\ndeep\t2\tnil\ndeep\t3\tnil\ndeep\t4\tnil\ndeep\t5\tnil\n"
                         "end\t6\tnil\ntext bye\nlua finish\n";
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", lua});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.stdoutText, expected);

  // -o FILE is where sonde's output goes, the script's with it.
  auto o = runSonde(script, kFiveRecords, dir.path(), {"--lua", lua, "-o", dir.file("out")});
  ASSERT_TRUE(o.exited && o.exitCode == 0) << describeRun(script, kFiveRecords, o);
  EXPECT_EQ(o.stdoutText, "");
  EXPECT_EQ(readFile(dir.file("out")), expected);
}

TEST(LuaConsumer, AnEventErrorNamesTheLineAndTheRestIsPrinted) {
  ScratchDir dir;
  std::string lua = dir.file("bad.lua");
  writeFile(lua, "function event(ev)\n"
                 "  local x = nil\n"
                 "  if ev.fields.n == 2 then return x.y end\n"
                 "  print(\"lua\", ev.fields.n)\n"
                 "end\n"
                 "function finish() print(\"finish\") end\n");
  std::string script = fiveRecordsScript();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", lua});
  ASSERT_TRUE(r.exited) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.exitCode, 1) << "a script that failed fails the run";
  std::regex reported("sonde: Lua error in event\\(\\) for a record of .*mark\\(\"deep\"\\) "
                      "\\(pid [0-9]+, tid [0-9]+\\): " +
                      lua + ":3: attempt to index a nil value \\(local 'x'\\)\n");
  EXPECT_TRUE(std::regex_search(r.stderrText, reported)) << r.stderrText;
  EXPECT_NE(r.stderrText.find("sonde: the Lua script failed; 4 records were printed as text "
                              "instead\n"),
            std::string::npos)
      << r.stderrText;
  // Nothing lost: records from the failing one on are printed as text.
  EXPECT_EQ(r.stdoutText, "lua\t1\nn=2 who=e2e_stack_fp\nn=3 who=e2e_stack_fp\n"
                          "n=4 who=e2e_stack_fp\nn=5 who=e2e_stack_fp\nfinish\n");

  // The same over a recorded trace.
  std::string trace = recordFive(dir);
  auto replay = report(dir, {"report", trace, "--lua", lua});
  ASSERT_TRUE(replay.exited) << replay.describe();
  EXPECT_EQ(replay.exitCode, 1);
  EXPECT_TRUE(std::regex_search(replay.stderrText, reported)) << replay.stderrText;
  EXPECT_EQ(replay.stdoutText, r.stdoutText);
}

// The records the text fallback could not write count as lost.
TEST(LuaConsumer, RecordsTheFallbackCannotWriteAreCountedLost) {
  ScratchDir dir;
  std::string lua = dir.file("bad.lua");
  writeFile(lua, "function event(ev)\n"
                 "  local x = nil\n"
                 "  if ev.fields.n == 2 then return x.y end\n"
                 "end\n");
  std::string script = fiveRecordsScript();
  auto r = runSonde(script, kFiveRecords, dir.path(), {"--lua", lua, "-o", "/dev/full"});
  ASSERT_TRUE(r.exited) << describeRun(script, kFiveRecords, r);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find("sonde: ERROR: cannot write '/dev/full': No space left on device"),
            std::string::npos)
      << r.stderrText;
  EXPECT_NE(r.stderrText.find(", 4 lost (4 not written: write error)"), std::string::npos)
      << r.stderrText;
}

TEST(LuaConsumer, AScriptThatDoesNotLoadStopsBeforeTheTarget) {
  ScratchDir dir;
  std::string lua = dir.file("syntax.lua");
  writeFile(lua, "function event(ev)\n  print(ev\nend\n");
  // A target that leaves a file behind when it runs.
  std::string script = fiveRecordsScript(), touch = "/usr/bin/touch " + dir.file("ran");
  auto r = runSonde(script, touch, dir.path(), {"--lua", lua});
  ASSERT_TRUE(r.exited) << describeRun(script, touch, r);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText,
            "sonde: " + lua + ":3: ')' expected (to close '(' at line 2) near 'end'\n");
  EXPECT_EQ(r.stdoutText, "");
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "the target never runs";
  writeFile(dir.file("good.lua"), "function event(ev) end\n");
  auto good = runSonde(script, touch, dir.path(), {"--lua", dir.file("good.lua")});
  EXPECT_EQ(good.exitCode, 0) << describeRun(script, touch, good);
  EXPECT_TRUE(std::filesystem::exists(dir.file("ran"))) << "it does with a script that loads";

  auto missing = runSonde(script, kFiveRecords, dir.path(), {"--lua", dir.file("none.lua")});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(missing.stderrText,
            "sonde: cannot open " + dir.file("none.lua") + ": No such file or directory\n");
  auto replay = report(dir, {"report", recordFive(dir), "--lua", dir.file("none.lua")});
  EXPECT_EQ(replay.exitCode, 1);
  EXPECT_EQ(replay.stderrText,
            "sonde report: cannot open " + dir.file("none.lua") + ": No such file or directory\n");
}

TEST(LuaConsumer, OptionsThatDoNotGoWithLua) {
  ScratchDir dir;
  std::string lua = dir.file("count.lua"), script = fiveRecordsScript();
  writeFile(lua, "function event(ev) end\n");
  struct Case {
    std::vector<std::string> options;
    std::string message;
  } cases[] = {
      {{"--transport=text"}, "option --lua needs a record transport"},
      {{"-b", "-o", dir.file("t")}, "run the script over it with `sonde report DIR --lua FILE`"},
      {{"--format=json"}, "or drop --format"},
  };
  for (const Case &c : cases) {
    std::vector<std::string> options = c.options;
    options.insert(options.end(), {"--lua", lua});
    auto r = runSonde(script, kFiveRecords, dir.path(), options);
    EXPECT_TRUE(r.exited && r.exitCode == 1) << describeRun(script, kFiveRecords, r);
    EXPECT_NE(r.stderrText.find(c.message), std::string::npos) << r.stderrText;
  }
  auto replay = report(dir, {"report", recordFive(dir), "--format=json", "--lua", lua});
  EXPECT_EQ(replay.exitCode, 1);
  EXPECT_EQ(replay.stderrText,
            "sonde report: --lua hands the records to the script: it takes no --format\n");
}

} // namespace
} // namespace sonde::e2e
