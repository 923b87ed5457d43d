// Golden-output conformance: every tests/conformance/AREA/NAME.probe is run by
// the real `sonde` from inside AREA/, and its stdout, stderr and exit status must
// equal NAME.stdout, NAME.stderr (empty when absent) and NAME.exit (0 when absent).
// Header comments pass options: `# options: -D MAXACTION=10`, `# args: 1 foo`,
// `# target: ARGS` (tests/kernel/kernel_workload ARGS as the -c command),
// `# marker-target: ARGS` (tests/e2e/marker_workload ARGS as the -c command; its
// absolute path reads MARKER_WORKLOAD in the output, as pp() and errors name it).
#include "ProcessRunner.h"
#include "ScriptFiles.h"
#include "TextDiff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace sonde::test {
namespace {

namespace fs = std::filesystem;

const fs::path kConformanceDir = fs::path(SONDE_TEST_DIR) / "conformance";
constexpr std::chrono::seconds kTimeout{60};

struct ConformanceCase {
  fs::path script;
  std::string testName; // AREA_NAME
};

std::vector<ConformanceCase> allCases() {
  std::vector<ConformanceCase> cases;
  std::error_code ec;
  for (const auto &entry : fs::recursive_directory_iterator(kConformanceDir, ec)) {
    if (entry.path().extension() != ".probe")
      continue;
    std::string name =
        entry.path().parent_path().filename().string() + "_" + entry.path().stem().string();
    std::replace_if(
        name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
    cases.push_back({entry.path(), name});
  }
  std::sort(cases.begin(), cases.end(),
            [](const auto &a, const auto &b) { return a.testName < b.testName; });
  return cases;
}

class Conformance : public ::testing::TestWithParam<ConformanceCase> {};

TEST_P(Conformance, MatchesGoldenOutput) {
  const fs::path &script = GetParam().script;
  std::string text = readFile(script);
  std::vector<std::string> args = headerWords(text, "options");
  // `# target: close 1000 -1 1` runs the kernel workload with those arguments,
  // `# marker-target: chain 3` the marker workload.
  auto addCommand = [&](const std::string &workload, const std::vector<std::string> &words) {
    std::string command = workload;
    for (const auto &word : words)
      command += " " + word;
    args.insert(args.end(), {"-c", command});
  };
  if (std::vector<std::string> target = headerWords(text, "target"); !target.empty())
    addCommand(KERNEL_WORKLOAD, target);
  std::vector<std::string> markerTarget = headerWords(text, "marker-target");
  if (!markerTarget.empty())
    addCommand(MARKER_WORKLOAD, markerTarget);
  args.push_back(script.filename().string());
  for (auto &a : headerWords(text, "args"))
    args.push_back(a);

  std::string command = "cd " + script.parent_path().string() + " && " SONDE_BINARY;
  for (const auto &a : args)
    command += a.find(' ') == std::string::npos ? " " + a : " '" + a + "'";
  ProcessResult r = runProcess(SONDE_BINARY, args, script.parent_path().string(), kTimeout);
  ASSERT_TRUE(r.error.empty()) << r.describe();
  ASSERT_TRUE(r.exited) << "`" << command << "` ended with " << r.describe() << "\nstderr:\n"
                        << r.stderrText;

  // Kernel scripts where the kernel refuses BPF: the one-line reason, then skip.
  if (r.exitCode != 0 && r.stderrText.find("kernel probes need root") != std::string::npos)
    GTEST_SKIP() << r.stderrText;

  // The build tree's path differs between machines: goldens name the workload
  // MARKER_WORKLOAD (the path sonde resolved may be the canonical one).
  if (!markerTarget.empty()) {
    for (const std::string &path :
         {fs::canonical(MARKER_WORKLOAD).string(), std::string(MARKER_WORKLOAD)}) {
      for (std::string *out : {&r.stdoutText, &r.stderrText})
        for (size_t at; (at = out->find(path)) != std::string::npos;)
          out->replace(at, path.size(), "MARKER_WORKLOAD");
    }
  }

  auto expectedOf = [&](const char *ext) {
    fs::path p = fs::path(script).replace_extension(ext);
    return fs::exists(p) ? readFile(p) : std::string();
  };
  std::string exitText = expectedOf(".exit");
  int expectedExit = exitText.empty() ? 0 : std::stoi(exitText);

  EXPECT_EQ(r.exitCode, expectedExit) << "`" << command << "`\nstderr:\n" << r.stderrText;
  std::string expectedOut = expectedOf(".stdout"), expectedErr = expectedOf(".stderr");
  if (r.stdoutText != expectedOut)
    ADD_FAILURE() << "stdout of `" << command << "` differs:\n"
                  << lineDiff(expectedOut, r.stdoutText);
  if (r.stderrText != expectedErr)
    ADD_FAILURE() << "stderr of `" << command << "` differs:\n"
                  << lineDiff(expectedErr, r.stderrText);
}

INSTANTIATE_TEST_SUITE_P(Golden, Conformance, ::testing::ValuesIn(allCases()),
                         [](const auto &info) { return info.param.testName; });

TEST(ConformanceLayout, HasTheScripts) { EXPECT_GE(allCases().size(), 200u); }

} // namespace
} // namespace sonde::test
