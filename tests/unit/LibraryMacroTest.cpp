// Library macros (language.md 1): the *.stpm files of the tapset directories,
// loaded by the Frontend before any script (parse/MacroLibrary.cpp and the
// library lookups of parse/Preprocessor.cpp).
#include "driver/Frontend.h"
#include "print/ScriptPrinter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace sonde {
namespace {

namespace fs = std::filesystem;

struct Parsed {
  bool ok = false;
  std::string printed;     // -p1 output when parsing succeeded
  std::string diagnostics; // everything the front end reported
};

class LibraryMacroTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("sonde-stpm-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  void write(const std::string &name, const std::string &text) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

  FrontendOptions options() const {
    FrontendOptions opts;
    opts.loadStdlib = false;
    opts.includeDirs = {dir_.string()};
    return opts;
  }

  Parsed parse(const std::string &script, FrontendOptions opts) const {
    std::ostringstream diags;
    Frontend fe(diags, std::move(opts));
    Parsed r;
    r.ok = fe.parseUserScript("s.probe", script);
    if (r.ok) {
      std::ostringstream printed;
      printParsedScript(fe.script(), printed);
      r.printed = printed.str();
    }
    r.diagnostics = diags.str();
    return r;
  }
  Parsed parse(const std::string &script) const { return parse(script, options()); }

  fs::path dir_;
};

std::string probeBegin(const std::string &stmt) {
  return "# parse tree dump\n# file s.probe\nprobe begin {\n  " + stmt + "\n}\n";
}

TEST_F(LibraryMacroTest, ScriptsUseLibraryMacros) {
  write("m.stpm", "// comments are fine\n"
                  "@define plus1(x) %( (@x + 1) %)\n"
                  "@define two %( 2 %)\n");
  Parsed r = parse("probe begin { println(@plus1(@two)) }\n");
  EXPECT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.diagnostics, "");
  EXPECT_EQ(r.printed, probeBegin("println((2) + (1));"));
}

TEST_F(LibraryMacroTest, MacrosComeFromEveryFileAndSubdirectory) {
  write("a.stpm", "@define a %( 1 %)\n");
  write("linux/b.stpm", "@define b %( @a + 2 %)\n"); // a body may use another file's macro
  Parsed r = parse("probe begin { println(@b) }\n");
  EXPECT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.printed, probeBegin("println((1) + (2));"));
}

TEST_F(LibraryMacroTest, TapsetFilesSeeThemToo) {
  // Loaded before any file, whatever the order of the names.
  write("a.probe", "function lib_width() { return @width }\n");
  write("z.stpm", "@define width %( 64 %)\n");
  std::ostringstream diags;
  Frontend fe(diags, options());
  EXPECT_TRUE(fe.parseUserScript("s.probe", "probe begin { println(lib_width()) }\n"));
  EXPECT_TRUE(fe.parseLibraries()) << diags.str();
  EXPECT_TRUE(fe.elaborate()) << diags.str();
  EXPECT_EQ(diags.str(), "");
}

TEST_F(LibraryMacroTest, AScriptsOwnDefinitionShadowsTheLibrarys) {
  write("m.stpm", "@define inner %( 1 %)\n"
                  "@define outer %( @inner %)\n"
                  "@define wrap(x) %( @x %)\n");
  Parsed r = parse("@define inner %( 2 %)\n"
                   "probe begin { println(@inner, @outer, @wrap(@inner)) }\n");
  EXPECT_TRUE(r.ok) << r.diagnostics;
  // A library body sees library macros only; an argument expands where it was
  // written, with the script's macros (as in stap).
  EXPECT_EQ(r.printed, probeBegin("println(2, 1, 2);"));
}

TEST_F(LibraryMacroTest, ConditionalsChooseDefinitions) {
  write("m.stpm", "%( arch == \"x86_64\" %?\n"
                  "@define bits %( 64 %)\n"
                  "%:\n"
                  "@define bits %( 32 %)\n"
                  "%)\n");
  EXPECT_EQ(parse("probe begin { println(@bits) }\n").printed, probeBegin("println(64);"));
  FrontendOptions i386 = options();
  i386.parse.arch = "i386";
  EXPECT_EQ(parse("probe begin { println(@bits) }\n", i386).printed, probeBegin("println(32);"));
}

TEST_F(LibraryMacroTest, InvocationsThatExpandToNothingAreAllowed) {
  write("a.stpm", "@define nothing %( %)\n");
  write("b.stpm", "@nothing\n@define one %( 1 %)\n");
  Parsed r = parse("probe begin { println(@one) }\n");
  EXPECT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.printed, probeBegin("println(1);"));
}

TEST_F(LibraryMacroTest, AnythingButDefinesIsAnError) {
  write("bad.stpm", "@define unused %( 1 %)\nprobe begin {}\n");
  Parsed r = parse("probe begin { println(@unused) ");
  EXPECT_FALSE(r.ok);
  // The script is still parsed; only its own errors are counted.
  EXPECT_EQ(r.diagnostics, "parse error: unexpected token in library macro file '" +
                               path("bad.stpm") +
                               "'\n"
                               "         at: keyword at " +
                               path("bad.stpm") +
                               ":2:1\n"
                               "     source: probe begin {}\n"
                               "             ^\n"
                               "\n"
                               "WARNING: macro tapset \"" +
                               path("bad.stpm") +
                               "\" has errors, and will be skipped.\n"
                               "parse error: unknown operator @unused\n"
                               "        saw: operator '@unused' at s.probe:1:23\n"
                               "     source: probe begin { println(@unused) \n"
                               "                                   ^\n"
                               "\n"
                               "1 parse error.\n");
}

TEST_F(LibraryMacroTest, ABrokenFileFailsEveryParse) {
  write("bad.stpm", "@define broken %( 1\n");
  Parsed r = parse("probe begin { println(1) }\n");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics, "parse error: incomplete macro definition - missing '%)'\n"
                           "         at: identifier 'broken' at " +
                               path("bad.stpm") +
                               ":1:9\n"
                               "     source: @define broken %( 1\n"
                               "                     ^\n"
                               "\n"
                               "WARNING: macro tapset \"" +
                               path("bad.stpm") + "\" has errors, and will be skipped.\n");
}

TEST_F(LibraryMacroTest, RedefinitionInOneFileIsAnError) {
  write("m.stpm", "@define x %( 1 %)\n@define x %( 2 %)\n");
  Parsed r = parse("probe begin { println(1) }\n");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("parse error: attempt to redefine macro '@x' in the same file\n"
                               "         at: identifier 'x' at " +
                               path("m.stpm") + ":2:9\n"),
            std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("parse error: macro '@x' first defined here\n"), std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("WARNING: macro tapset"), std::string::npos) << r.diagnostics;
}

TEST_F(LibraryMacroTest, RedefinitionAcrossFilesSkipsTheLaterFile) {
  write("a.stpm", "@define x %( 1 %)\n");
  write("b.stpm", "@define x %( 2 %)\n@define y %( 3 %)\n");
  Parsed r = parse("probe begin { println(@x) }\n");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics, "parse error: duplicate definition of library macro '@x'\n"
                           "         at: identifier 'x' at " +
                               path("b.stpm") +
                               ":1:9\n"
                               "     source: @define x %( 2 %)\n"
                               "                     ^\n"
                               "\n"
                               "parse error: macro '@x' first defined here\n"
                               "         at: identifier 'x' at " +
                               path("a.stpm") +
                               ":1:9\n"
                               "     source: @define x %( 1 %)\n"
                               "                     ^\n"
                               "\n"
                               "WARNING: macro tapset \"" +
                               path("b.stpm") + "\" has errors, and will be skipped.\n");
  // Nothing of b.stpm was taken, @y included.
  std::ostringstream diags;
  Frontend fe(diags, options());
  fe.parseUserScript("s.probe", "probe begin { println(@y) }\n");
  EXPECT_NE(diags.str().find("unknown operator @y"), std::string::npos) << diags.str();
}

TEST_F(LibraryMacroTest, TheStdlibMacrosLoadCleanly) {
  FrontendOptions opts;
  opts.loadStdlib = true;
  Parsed r = parse("global s\n"
                   "probe begin {\n"
                   "  @this1 = 1\n"
                   "  @try_assign(x, 10 / @this1, -1)\n"
                   "  s <<< @choose_defined(x, 0)\n"
                   "  @prints(s)\n"
                   "}\n",
                   opts);
  EXPECT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.diagnostics, "");
  EXPECT_NE(r.printed.find("(__this_var1[tid()]) = (1);"), std::string::npos) << r.printed;
}

} // namespace
} // namespace sonde
