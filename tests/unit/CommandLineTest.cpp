#include "driver/CommandLine.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace {

struct Args {
  std::vector<std::string> storage;
  std::vector<char *> argv;
  Args(const std::vector<const char *> &list) {
    storage.emplace_back("sonde");
    for (const char *a : list)
      storage.emplace_back(a);
    for (auto &s : storage)
      argv.push_back(s.data());
  }
  int argc() { return static_cast<int>(argv.size()); }
};

std::optional<sonde::CommandLine> parse(std::initializer_list<const char *> list,
                                        std::string &error) {
  Args a(list);
  return sonde::parseCommandLine(a.argc(), a.argv.data(), error);
}

TEST(CommandLine, ScriptFileAndArguments) {
  std::string err;
  auto cl = parse({"-v", "app.probe", "5", "foo"}, err);
  ASSERT_TRUE(cl) << err;
  EXPECT_EQ(*cl->scriptFile, "app.probe");
  EXPECT_EQ(cl->scriptArgs, (std::vector<std::string>{"5", "foo"}));
  EXPECT_EQ(cl->verbosity, 1);
  EXPECT_EQ(cl->lastPass, 5);
}

TEST(CommandLine, OptionsAfterTheScriptAreOptions) {
  std::string err;
  auto cl = parse({"app.probe", "-p2", "--", "-5"}, err);
  ASSERT_TRUE(cl) << err;
  EXPECT_EQ(cl->lastPass, 2);
  EXPECT_EQ(cl->scriptArgs, (std::vector<std::string>{"-5"}));
}

TEST(CommandLine, InlineScriptAndPassNumberForms) {
  std::string err;
  auto cl = parse({"-e", "probe begin {}", "-p", "1", "-vv"}, err);
  ASSERT_TRUE(cl) << err;
  EXPECT_EQ(*cl->scriptText, "probe begin {}");
  EXPECT_FALSE(cl->scriptFile);
  EXPECT_EQ(cl->lastPass, 1);
  EXPECT_EQ(cl->verbosity, 2);
}

TEST(CommandLine, StdinScript) {
  std::string err;
  auto cl = parse({"-", "arg"}, err);
  ASSERT_TRUE(cl) << err;
  EXPECT_EQ(*cl->scriptFile, "-");
  EXPECT_EQ(cl->scriptArgs, (std::vector<std::string>{"arg"}));
}

TEST(CommandLine, DefinesAndGlobals) {
  std::string err;
  auto cl = parse({"-DMAXACTION=10", "-D", "MAXSTRINGLEN=64", "-G", "x=3", "-e", "x"}, err);
  ASSERT_TRUE(cl) << err;
  ASSERT_EQ(cl->defines.size(), 2u);
  EXPECT_EQ(cl->defines[0].first, "MAXACTION");
  EXPECT_EQ(cl->defines[1].second, "64");
  EXPECT_EQ(cl->globals[0].first, "x");
}

TEST(CommandLine, Errors) {
  struct Case {
    std::vector<const char *> args; // owned: an initializer_list here would dangle
    const char *message;
  };
  for (const auto &c : std::vector<Case>{
           {{"-p", "7", "a.probe"}, "Invalid pass number (should be 1-5)."},
           {{"-s", "0", "a.probe"}, "Invalid buffer size (should be 1-4095)."},
           {{"-e", "a", "-e", "b"}, "Only one script can be given on the command line."},
           {{"-c", "ls", "-x", "1", "a.probe"}, "You can't specify -c and -x together."},
           {{"--transport=udp", "a.probe"},
            "option --transport: expected text, relay or netlink, got 'udp'"},
           {{"--mode", "lossy", "a.probe"},
            "option --mode: expected block, discard or overwrite, got 'lossy'"},
           {{"-DX", "a.probe"}, "option -D: expected NAME=VALUE, got 'X'"},
           {{"-q", "a.probe"}, "unknown option '-q' (see sonde --help)"},
           {{"--frobnicate", "a.probe"}, "unknown option '--frobnicate' (see sonde --help)"},
           {{"-x", "abc", "a.probe"}, "option -x: invalid process id 'abc'"},
           {{"-p"}, "option -p requires a value"},
           {{}, "no script given: name a FILE, '-' for standard input, or use -e SCRIPT "
                "(see sonde --help)"},
       }) {
    std::string err;
    Args a(c.args);
    EXPECT_FALSE(sonde::parseCommandLine(a.argc(), a.argv.data(), err));
    EXPECT_EQ(err, c.message);
  }
}

// stap's requests for symbol and unwind data: accepted (scripts' headers pass
// them), each noted once for -v.
TEST(CommandLine, SymbolDataOptionsAcceptedAndNotedOnce) {
  std::string err;
  auto cl = parse(
      {"-d", "/usr/bin/ls", "--ldd", "-dkernel", "--all-modules", "-e", "probe begin {}"}, err);
  ASSERT_TRUE(cl) << err;
  EXPECT_EQ(cl->symbolDataOptions, (std::vector<std::string>{"-d", "--ldd", "--all-modules"}));
  EXPECT_EQ(*cl->scriptText, "probe begin {}");
  EXPECT_FALSE(parse({"-e", "probe begin {}", "-d"}, err));
  EXPECT_EQ(err, "option -d requires a value");
  EXPECT_FALSE(parse({"--ldd=x", "-e", "probe begin {}"}, err));
  EXPECT_EQ(err, "option --ldd takes no value");
}

TEST(CommandLine, ListingTakesNoScript) {
  std::string err;
  auto cl = parse({"-L", "process(\"a\").mark(\"*\")"}, err);
  ASSERT_TRUE(cl) << err;
  EXPECT_TRUE(cl->listVariables);
  EXPECT_FALSE(parse({"-l", "begin", "x.probe"}, err));
}

TEST(CommandLine, HelpListsEveryOption) {
  std::string help = sonde::helpText();
  for (const char *opt : {"-e", "-E", "-p", "-I", "-D", "-G", "-u", "-k", "-v", "-w", "-W", "-c",
                          "-x", "-T", "-l", "-L", "-o", "-S", "-s", "-b", "-F", "--transport",
                          "--mode", "--format", "--compatible", "--skip-badvars", "--color",
                          "--no-global-var-display", "--suppress-handler-errors",
                          "--suppress-time-limits", "-d", "--ldd", "--all-modules", "-h, --help",
                          "-V, --version"})
    EXPECT_NE(help.find(std::string("  ") + opt), std::string::npos) << opt;
}

} // namespace
