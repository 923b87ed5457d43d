// `sonde --help` and the man page docs/sonde.1 name the same options: each
// option one of them lists, the other lists too.
#include "../corpus/ProcessRunner.h"
#include "../corpus/ScriptFiles.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace sonde::test {
namespace {

// "-x", "--mode": an option word, without its value ("--mode=MODE" -> "--mode").
std::string optionName(std::string word) {
  word = word.substr(0, word.find_first_of("=["));
  while (!word.empty() && (word.back() == ',' || word.back() == '"'))
    word.pop_back();
  return word;
}

// Options at the start of the help's indented lines ("  -h, --help   show ...").
std::set<std::string> helpOptions(const std::string &help) {
  std::set<std::string> out;
  std::regex line("^  (-[^ ,]+)(, (-[^ ,]+))?");
  for (const std::string &l : linesOf(help)) {
    std::smatch m;
    if (!std::regex_search(l, m, line))
      continue;
    out.insert(optionName(m[1]));
    if (m[3].matched)
      out.insert(optionName(m[3]));
  }
  return out;
}

// Options in the tag line after each `.TP` of the man page (`.BI \-x " PID"`,
// `.BR \-h ", " \-\-help`).
std::set<std::string> manOptions(const std::string &man) {
  std::set<std::string> out;
  std::vector<std::string> lines = linesOf(man);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i] != ".TP")
      continue;
    std::string tag = std::regex_replace(lines[i + 1], std::regex("\\\\-"), "-");
    static const std::regex option("(^|[ \"])(-[-a-zA-Z0-9]+)");
    for (auto it = std::sregex_iterator(tag.begin(), tag.end(), option);
         it != std::sregex_iterator(); ++it)
      out.insert(optionName((*it)[2]));
  }
  return out;
}

TEST(CliManPage, HelpAndManPageNameTheSameOptions) {
  ProcessResult help = runProcess(SONDE_BINARY, {"--help"}, ".", std::chrono::seconds(30));
  ASSERT_EQ(help.exitCode, 0) << help.describe();
  std::set<std::string> fromHelp = helpOptions(help.stdoutText);
  std::set<std::string> fromMan =
      manOptions(readFile(std::string(SONDE_TEST_DIR) + "/../docs/sonde.1"));
  // Not vacuous: both name the common options.
  for (const char *o : {"-e", "-c", "-x", "--transport", "--mode", "--help", "--version"}) {
    EXPECT_TRUE(fromHelp.count(o)) << o;
    EXPECT_TRUE(fromMan.count(o)) << o;
  }
  for (const std::string &o : fromHelp)
    EXPECT_TRUE(fromMan.count(o)) << o << " is in --help, not in docs/sonde.1";
  for (const std::string &o : fromMan)
    EXPECT_TRUE(fromHelp.count(o)) << o << " is in docs/sonde.1, not in --help";
}

} // namespace
} // namespace sonde::test
