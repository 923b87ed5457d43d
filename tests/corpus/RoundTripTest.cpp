// The -p1 round trip over every script that must parse: tests/parse/accept and
// tests/parse/warn, and the bundled examples. Each one is parsed, printed, parsed
// again and compared by dumpAst. A first line `# args: A B ...` gives the
// script's $1/@1 arguments, as in CorpusTest.
#include "../unit/PrinterRoundTrip.h"
#include "ScriptFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sonde::test {
namespace {

namespace fs = std::filesystem;

struct RoundTripCase {
  fs::path script;
  std::string testName;
};

// gtest names allow only [A-Za-z0-9_]; the folder keeps names unique.
std::string testNameOf(const std::string &folder, const fs::path &relative) {
  std::string name = folder + '_' + relative.string();
  name.resize(name.size() - relative.extension().string().size());
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

void collect(const fs::path &dir, const std::string &folder, std::vector<RoundTripCase> &out) {
  std::error_code ec;
  for (const auto &entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".probe")
      out.push_back({entry.path(), testNameOf(folder, entry.path().lexically_relative(dir))});
}

std::vector<RoundTripCase> allCases() {
  std::vector<RoundTripCase> cases;
  const fs::path testDir(SONDE_TEST_DIR);
  collect(testDir / "parse" / "accept", "accept", cases);
  collect(testDir / "parse" / "warn", "warn", cases);
  collect(testDir.parent_path() / "examples", "examples", cases);
  std::sort(cases.begin(), cases.end(),
            [](const RoundTripCase &a, const RoundTripCase &b) { return a.testName < b.testName; });
  return cases;
}

class RoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(RoundTrip, PrintedScriptParsesToTheSameTree) {
  const fs::path &script = GetParam().script;
  std::string text = readFile(script);
  ASSERT_FALSE(text.empty()) << "cannot read " << script;
  EXPECT_TRUE(roundTrips(script.filename().string(), text, headerWords(text, "args")));
}

INSTANTIATE_TEST_SUITE_P(Corpus, RoundTrip, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<RoundTripCase> &info) {
                           return info.param.testName;
                         });

// Guards against the corpus silently moving away: zero cases would pass vacuously.
TEST(RoundTripCorpus, HasScripts) { EXPECT_GE(allCases().size(), 10u); }

} // namespace
} // namespace sonde::test
