// The front-end conformance corpus: every script under tests/parse/ runs through
// the real `sonde -p2` binary, from inside its own folder so that diagnostics name
// it as `NAME.probe:LINE:COL`.
//   accept/NAME.probe  must exit 0 with nothing on stderr;
//   warn/NAME.probe    must exit 0 with stderr exactly NAME.expected;
//   reject/NAME.probe  must exit non-zero with stderr exactly NAME.expected.
// A first line `# args: A B ...` passes A B ... as the script's $1/@1 arguments.
#include "ProcessRunner.h"
#include "ScriptFiles.h"
#include "TextDiff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sonde::test {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kTimeout{30};
const fs::path kParseDir = fs::path(SONDE_TEST_DIR) / "parse";

struct CorpusCase {
  fs::path script;
  std::string testName;
};

// Failure messages name the script rather than dumping the struct's bytes.
void PrintTo(const CorpusCase &c, std::ostream *os) { *os << c.script; }

// gtest names allow only [A-Za-z0-9_].
std::string testNameOf(const fs::path &script) {
  std::string name = script.stem().string();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

std::vector<CorpusCase> casesIn(const char *folder) {
  std::vector<CorpusCase> cases;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(kParseDir / folder, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".probe")
      cases.push_back({entry.path(), testNameOf(entry.path())});
  std::sort(cases.begin(), cases.end(),
            [](const CorpusCase &a, const CorpusCase &b) { return a.script < b.script; });
  return cases;
}

// tests/parse/pending.txt: "FOLDER/NAME: reason" for scripts a later issue makes pass.
std::string pendingReason(const fs::path &script) {
  std::ifstream in(kParseDir / "pending.txt");
  std::string key = script.parent_path().filename().string() + "/" + script.stem().string() + ":";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0)
      return line.substr(key.size());
  return {};
}

struct SondeRun {
  std::string command; // for failure messages: how to reproduce by hand
  ProcessResult result;
};

SondeRun runSondeP2(const fs::path &script) {
  std::vector<std::string> args = {"-p2", script.filename().string()};
  auto scriptArgs = headerWords(readFile(script), "args");
  args.insert(args.end(), scriptArgs.begin(), scriptArgs.end());
  SondeRun run;
  run.command = "cd " + script.parent_path().string() + " && " SONDE_BINARY;
  for (const auto &a : args)
    run.command += " " + a;
  run.result = runProcess(SONDE_BINARY, args, script.parent_path().string(), kTimeout);
  return run;
}

void expectStderrMatches(const fs::path &script, const SondeRun &run) {
  fs::path expectedPath = fs::path(script).replace_extension(".expected");
  ASSERT_TRUE(fs::exists(expectedPath)) << expectedPath << " is missing";
  std::string expected = readFile(expectedPath);
  if (run.result.stderrText != expected)
    ADD_FAILURE() << "stderr of `" << run.command << "` differs from " << expectedPath.filename()
                  << ":\n"
                  << lineDiff(expected, run.result.stderrText);
}

class AcceptCorpus : public ::testing::TestWithParam<CorpusCase> {};
class WarnCorpus : public ::testing::TestWithParam<CorpusCase> {};
class RejectCorpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(AcceptCorpus, ParsesAndElaboratesCleanly) {
  if (auto reason = pendingReason(GetParam().script); !reason.empty())
    GTEST_SKIP() << "pending:" << reason;
  auto run = runSondeP2(GetParam().script);
  ASSERT_TRUE(run.result.error.empty()) << run.result.describe();
  EXPECT_TRUE(run.result.exited && run.result.exitCode == 0)
      << "`" << run.command << "` ended with " << run.result.describe();
  EXPECT_TRUE(run.result.stderrText.empty()) << "`" << run.command << "` printed diagnostics:\n"
                                             << run.result.stderrText;
}

TEST_P(WarnCorpus, ElaboratesWithExpectedWarnings) {
  if (auto reason = pendingReason(GetParam().script); !reason.empty())
    GTEST_SKIP() << "pending:" << reason;
  auto run = runSondeP2(GetParam().script);
  ASSERT_TRUE(run.result.error.empty()) << run.result.describe();
  EXPECT_TRUE(run.result.exited && run.result.exitCode == 0)
      << "`" << run.command << "` ended with " << run.result.describe();
  expectStderrMatches(GetParam().script, run);
}

TEST_P(RejectCorpus, FailsWithExpectedDiagnostics) {
  if (auto reason = pendingReason(GetParam().script); !reason.empty())
    GTEST_SKIP() << "pending:" << reason;
  auto run = runSondeP2(GetParam().script);
  ASSERT_TRUE(run.result.error.empty()) << run.result.describe();
  // A crash or a hang is never a correct rejection.
  EXPECT_TRUE(run.result.exited && run.result.exitCode != 0)
      << "`" << run.command << "` ended with " << run.result.describe();
  expectStderrMatches(GetParam().script, run);
}

std::string nameOf(const ::testing::TestParamInfo<CorpusCase> &info) { return info.param.testName; }

// An empty folder is reported by CorpusLayout below, not as an uninstantiated suite.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AcceptCorpus);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WarnCorpus);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RejectCorpus);
INSTANTIATE_TEST_SUITE_P(Parse, AcceptCorpus, ::testing::ValuesIn(casesIn("accept")), nameOf);
INSTANTIATE_TEST_SUITE_P(Parse, WarnCorpus, ::testing::ValuesIn(casesIn("warn")), nameOf);
INSTANTIATE_TEST_SUITE_P(Parse, RejectCorpus, ::testing::ValuesIn(casesIn("reject")), nameOf);

// The corpus itself must be well formed, or tests would silently go missing.
TEST(CorpusLayout, EveryFolderHasScripts) {
  EXPECT_FALSE(casesIn("accept").empty());
  EXPECT_FALSE(casesIn("reject").empty());
}

TEST(CorpusLayout, ExpectedFilesPairWithScripts) {
  for (const char *folder : {"accept", "warn", "reject"}) {
    bool needsExpected = std::string(folder) != "accept";
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(kParseDir / folder, ec)) {
      const fs::path &p = entry.path();
      if (p.extension() == ".probe")
        EXPECT_EQ(fs::exists(fs::path(p).replace_extension(".expected")), needsExpected)
            << p << (needsExpected ? " has no .expected file" : " must not have a .expected file");
      else if (p.extension() == ".expected")
        EXPECT_TRUE(fs::exists(fs::path(p).replace_extension(".probe")))
            << p << " has no .probe script";
      else
        ADD_FAILURE() << p << " is neither a .probe script nor an .expected file";
    }
  }
}

TEST(CorpusLayout, TestNamesAreUnique) {
  for (const char *folder : {"accept", "warn", "reject"}) {
    auto cases = casesIn(folder);
    for (size_t i = 1; i < cases.size(); ++i)
      EXPECT_NE(cases[i - 1].testName, cases[i].testName)
          << cases[i - 1].script << " and " << cases[i].script << " map to the same test name";
  }
}

} // namespace
} // namespace sonde::test
