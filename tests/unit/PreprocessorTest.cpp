// The token-level preprocessor: $N/@N arguments, @define macros and %( %)
// conditionals (parse/Preprocessor.cpp, parse/PreprocessorConditions.cpp).
#include "parse/Preprocessor.h"

#include "ParserTestSupport.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sonde::parse {
namespace {

ParseOptions defaultOptions() {
  ParseOptions o;
  o.kernelVersion = "6.8.0";
  o.kernelRelease = "6.8.0-45-generic";
  o.arch = "x86_64";
  o.runtime = "kernel";
  o.compatible = "5.5";
  o.privilege = "stapdev";
  o.kernelConfig = [](const std::string &name) -> std::string {
    if (name == "CONFIG_BPF")
      return "y";
    if (name == "CONFIG_HZ")
      return "250";
    if (name == "CONFIG_NR_CPUS")
      return "0x40";
    if (name == "CONFIG_LOCALVERSION")
      return "-generic";
    return "";
  };
  return o;
}

struct Expansion {
  std::string tokens;   // token texts; error tokens as <message>
  std::string warnings; // rendered warnings
};

Expansion preprocess(const std::string &text, ParseOptions opts = defaultOptions()) {
  SourceFile file("p.probe", text);
  std::ostringstream out;
  DiagnosticEngine diags(out);
  Preprocessor pp(opts, diags);
  std::vector<LexToken> tokens = pp.run(lexFile(file));
  Expansion r;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    r.tokens += i ? " " : "";
    r.tokens += tokens[i].error ? "<" + tokens[i].error->message + ">" : tokens[i].text;
  }
  diags.flush();
  r.warnings = out.str();
  return r;
}

std::string pp(const std::string &text, ParseOptions opts = defaultOptions()) {
  return preprocess(text, std::move(opts)).tokens;
}

std::string withArgs(const std::string &text, std::vector<std::string> args) {
  ParseOptions o = defaultOptions();
  o.scriptArgs = std::move(args);
  return pp(text, o);
}

// ------------------------------------------------------------ arguments

TEST(PreprocessorTest, DollarArgumentsSpliceRawText) {
  EXPECT_EQ(withArgs("x = $1 y", {"foo bar"}), "x = foo bar y");
  EXPECT_EQ(withArgs("x = $1 + $2", {"1", "0x10"}), "x = 1 + 0x10");
  // The rest of the token continues the argument's text.
  EXPECT_EQ(withArgs("x = $1abc", {"foo"}), "x = fooabc");
  EXPECT_EQ(withArgs("timer.ms($1)", {"100"}), "timer . ms ( 100 )");
}

TEST(PreprocessorTest, AtArgumentsBecomeStringLiterals) {
  EXPECT_EQ(withArgs("x = @1", {"a \"q\" \\b"}), "x = \"a \\\"q\\\" \\\\b\"");
  EXPECT_EQ(withArgs("process(@1)", {"/bin/ls"}), "process ( \"/bin/ls\" )");
}

TEST(PreprocessorTest, ArgumentCount) {
  EXPECT_EQ(withArgs("$# @#", {"a", "b", "c"}), "3 \"3\"");
  EXPECT_EQ(withArgs("$#", {}), "0");
}

TEST(PreprocessorTest, ArgumentsOutOfRange) {
  EXPECT_EQ(withArgs("$2", {"a"}), "<command line argument out of range [1-1]>");
  EXPECT_EQ(withArgs("$0", {"a"}), "<command line argument out of range [1-1]>");
  EXPECT_EQ(withArgs("@1", {}), "<command line argument out of range [1-0]>");
}

TEST(PreprocessorTest, ArgumentsCannotNest) {
  EXPECT_EQ(withArgs("$1", {"$2", "x"}), "<invalid nested substitution of command line arguments>");
}

TEST(PreprocessorTest, ArgumentsWorkInsideConditions) {
  EXPECT_EQ(withArgs("%( $1 > 2 %? big %: small %)", {"5"}), "big");
  EXPECT_EQ(withArgs("%( $1 > 2 %? big %: small %)", {"1"}), "small");
}

TEST(PreprocessorTest, UnusedArgumentsAreWarnedUnlessArgvIsDeclared) {
  ParseOptions o = defaultOptions();
  o.scriptArgs = {"1", "2"};
  test::ParseResult r = test::parseText("probe begin { println($1) }", o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, "WARNING: unused command line option $2/@2\n");
  r = test::parseText("global argv\nprobe begin { argv[1] = \"\"; println($1) }", o);
  EXPECT_EQ(r.diagnostics, "");
}

// ------------------------------------------------------------ macros

TEST(PreprocessorTest, MacroWithoutParameters) {
  EXPECT_EQ(pp("@define two %( 1 + 1 %) x = @two * @two"), "x = 1 + 1 * 1 + 1");
}

TEST(PreprocessorTest, MacroParameters) {
  EXPECT_EQ(pp("@define add(a, b) %( (@a + @b) %) x = @add(1, f(2, 3))"),
            "x = ( 1 + f ( 2 , 3 ) )");
  // Brackets nest too, for arguments like @p[i].
  EXPECT_EQ(pp("@define first(a) %( @a %) x = @first(m[1, 2])"), "x = m [ 1 , 2 ]");
}

TEST(PreprocessorTest, MacroArgumentsMayUseTheCallersParameters) {
  EXPECT_EQ(pp("@define inner(x) %( [@x] %) @define outer(y) %( @inner(@y + 1) %) @outer(7)"),
            "[ 7 + 1 ]");
}

TEST(PreprocessorTest, MacrosMayExpandToConditionals) {
  EXPECT_EQ(pp("@define is64 %( %( arch == \"x86_64\" %? 1 %: 0 %) %) @is64"), "1");
}

TEST(PreprocessorTest, UnknownAtWordsPassThrough) {
  EXPECT_EQ(pp("@count(x) @foo"), "@count ( x ) @foo");
}

TEST(PreprocessorTest, ParameterlessMacroLeavesParenthesesAlone) {
  EXPECT_EQ(pp("@define f %( g %) @f(1)"), "g ( 1 )");
}

TEST(PreprocessorTest, MacroErrors) {
  EXPECT_EQ(pp("@define m(a, b) %( @a %) @m(1)"),
            "<too few parameters for macro '@m' (expected 2)>");
  EXPECT_EQ(pp("@define m(a) %( @a %) @m(1, 2)"),
            "<too many parameters for macro '@m' (expected 1)> 2 )");
  EXPECT_EQ(pp("@define m(a) %( @a %) @m x"),
            "<expected '(' in invocation of macro '@m' taking 1 parameter>");
  EXPECT_EQ(pp("@define m(a) %( @a %) @m(1"), "<could not find end of macro invocation>");
  // After an error the rest of the definition flows on, as in stap.
  EXPECT_EQ(pp("@define 1 %( x %)"), "<expected identifier> <incomplete condition after '%('>");
  EXPECT_EQ(pp("@define m x"), "<expected '%(' or '('>");
  EXPECT_EQ(pp("@define m(a) x"), "<expected '%('>");
  EXPECT_EQ(pp("@define m(a b) %( 1 == 1 %? x %)"), "<expected ',' or ')'> ) x");
  EXPECT_EQ(pp("@define m %( x"), "<incomplete macro definition - missing '%)'>");
  EXPECT_EQ(pp("@define define %( x %) y"), "<attempt to redefine '@define'> y");
}

TEST(PreprocessorTest, RedefinitionIsOneErrorWithANote) {
  SourceFile file("p.probe", "@define w %( 1 %)\n@define w %( 2 %) x");
  std::ostringstream out;
  DiagnosticEngine diags(out);
  ParseOptions opts = defaultOptions();
  Preprocessor pp(opts, diags);
  std::vector<LexToken> tokens = pp.run(lexFile(file));
  ASSERT_EQ(tokens.size(), 3u); // error, x, EOF
  ASSERT_TRUE(tokens[0].error);
  EXPECT_EQ(tokens[0].error->message, "attempt to redefine macro '@w' in the same file");
  EXPECT_EQ(tokens[0].error->at.loc.line, 2u);
  EXPECT_EQ(tokens[0].error->noteMessage, "macro '@w' first defined here");
  EXPECT_EQ(tokens[0].error->noteAt.loc.line, 1u);
  EXPECT_EQ(tokens[1].text, "x");
}

TEST(PreprocessorTest, DefineInsideAMacroBodyIsAnError) {
  EXPECT_EQ(pp("@define outer %( @define inner %( 1 %) %) @outer y"),
            "<'@define' forbidden inside macro body> y");
}

TEST(PreprocessorTest, ShadowingABuiltinOperatorWarns) {
  Expansion r = preprocess("@define max(a, b) %( (@a > @b ? @a : @b) %) @max(1, 2)");
  EXPECT_EQ(r.tokens, "( 1 > 2 ? 1 : 2 )");
  EXPECT_NE(r.warnings.find("macro redefines built-in operator '@max'"), std::string::npos);
}

TEST(PreprocessorTest, MacroTokensKeepTheirBodyLocation) {
  SourceFile file("p.probe", "@define v %( 42 %)\nx = @v");
  std::ostringstream out;
  DiagnosticEngine diags(out);
  ParseOptions opts = defaultOptions();
  Preprocessor pp(opts, diags);
  std::vector<LexToken> tokens = pp.run(lexFile(file));
  ASSERT_EQ(tokens[2].text, "42");
  EXPECT_EQ(tokens[2].loc.line, 1u);
  EXPECT_EQ(tokens[2].loc.col, 14u);
}

// stap expands these forever; we stop and go on after the invocation.
TEST(PreprocessorTest, RecursiveMacrosStop) {
  EXPECT_EQ(pp("@define r %( @r %) a @r b"),
            "a <too many nested macro expansions (limit 1000)> b");
  std::string opened; // one "(" per f-and-g pair of expansions
  for (int i = 0; i < 500; ++i)
    opened += "( ";
  EXPECT_EQ(pp("@define f(x) %( @g(@x) %) @define g(y) %( (@f(@y)) %) @f(1) c"),
            opened + "<too many nested macro expansions (limit 1000)> c");
}

TEST(PreprocessorTest, DefinesInAnUntakenBranchDoNotDefine) {
  EXPECT_EQ(pp("%( 1 == 0 %? @define m %( a %) %) @m"), "@m");
  EXPECT_EQ(pp("%( 1 == 1 %? @define m %( a %) %) @m"), "a");
}

// ------------------------------------------------------------ conditionals

TEST(PreprocessorTest, ThenElseAndNesting) {
  EXPECT_EQ(pp("%( 1 == 1 %? a %: b %) c"), "a c");
  EXPECT_EQ(pp("%( 1 == 2 %? a %: b %) c"), "b c");
  EXPECT_EQ(pp("%( 1 == 2 %? a %) c"), "c");
  EXPECT_EQ(pp("%( 1 == 1 %? %( 2 == 2 %? x %: y %) %: z %)"), "x");
  EXPECT_EQ(pp("%( 1 == 2 %? %( 2 == 2 %? x %: y %) %: z %)"), "z");
  // The untaken branch only needs balanced %( %); its junk is ignored.
  EXPECT_EQ(pp("%( 1 == 2 %? %( junk junk %) $9 %: ok %)"), "ok");
}

TEST(PreprocessorTest, KernelVersions) {
  EXPECT_EQ(pp("%( kernel_v >= \"6.1\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( kernel_v < \"6.10\" %? y %: n %)"), "y"); // strverscmp, not strcmp
  EXPECT_EQ(pp("%( kernel_v == \"6.8.0\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( kernel_v != \"6.8.0\" %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( kernel_v > \"6.8.0\" %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( kernel_v <= \"6.8.0\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( kernel_vr == \"6.8.*\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( kernel_vr != \"*-generic\" %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( kernel_v == \"6.[0-7]*\" %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( systemtap_v >= \"4.0\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( systemtap_v < \"5.10\" %? y %: n %)"), "y");
}

TEST(PreprocessorTest, ArchRuntimePrivilegeGuru) {
  EXPECT_EQ(pp("%( arch == \"x86_64\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( arch == \"i?86\" %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( arch != \"arm*\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( runtime == \"kernel\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( runtime == \"bpf\" %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( systemtap_privilege == \"stapdev\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( systemtap_privilege != \"stapusr\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( guru_mode == 0 %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( guru_mode == 1 %? y %: n %)"), "n");
}

TEST(PreprocessorTest, KernelConfig) {
  EXPECT_EQ(pp("%( CONFIG_BPF == \"y\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( CONFIG_BPF == \"[ym]\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( CONFIG_NOPE == \"\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( CONFIG_HZ >= 250 %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( CONFIG_HZ < CONFIG_NR_CPUS %? y %: n %)"), "n");        // 250 < 64
  EXPECT_EQ(pp("%( CONFIG_BPF == CONFIG_LOCALVERSION %? y %: n %)"), "n"); // as strings
  EXPECT_EQ(pp("%( CONFIG_NOPE == 0 %? y %: n %)"), "y");                  // unset reads as 0
}

TEST(PreprocessorTest, LiteralComparisons) {
  EXPECT_EQ(pp("%( \"abc\" < \"abd\" %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( \"a*\" == \"abc\" %? y %: n %)"), "n"); // no wildcards here
  EXPECT_EQ(pp("%( 10 > 9 %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( 0x10 == 16 %? y %: n %)"), "y");
}

TEST(PreprocessorTest, AndBindsTighterThanOr) {
  EXPECT_EQ(pp("%( 1 == 1 || 1 == 2 && 1 == 2 %? y %: n %)"), "y");
  EXPECT_EQ(pp("%( 1 == 2 && 1 == 1 || 1 == 2 %? y %: n %)"), "n");
  EXPECT_EQ(pp("%( 1 == 2 || 1 == 1 && 2 == 2 %? y %: n %)"), "y");
}

TEST(PreprocessorTest, ConditionalErrors) {
  EXPECT_EQ(pp("%( arch == \"x86_64\" x %)"),
            "<expected '%?' marker for conditional> <incomplete conditional - missing '%('>");
  EXPECT_EQ(pp("%( arch =="), "<incomplete condition after '%('>");
  EXPECT_EQ(pp("a %? b"), "a <incomplete conditional - missing '%('> b");
  EXPECT_EQ(pp("a %: b"), "a <incomplete conditional - missing '%('> b");
  EXPECT_EQ(pp("a %) b"), "a <incomplete conditional - missing '%('> b");
  EXPECT_EQ(pp("%( 1 == 1 %? a %: b %: c %)"), "a <invalid conditional - duplicate '%:'>");
  EXPECT_EQ(pp("%( 1 == 1 %? a"), "a <incomplete conditional at end of file>");
  EXPECT_EQ(pp("%( kernel_v > \"6.*\" %? a %)"),
            "<wildcard not allowed with order comparison operators> "
            "<incomplete conditional - missing '%('> a "
            "<incomplete conditional - missing '%('>");
  EXPECT_EQ(pp("%( kernel_v == 6 %? a %)").substr(0, 25), "<expected string literal>");
  EXPECT_EQ(pp("%( arch < \"x\" %? a %)").substr(0, 22), "<expected '==' or '!='");
  EXPECT_EQ(pp("%( guru_mode == 2 %? a %)").substr(0, 16), "<expected 0 or 1");
  EXPECT_EQ(pp("%( \"a\" == 1 %? a %)").substr(0, 33), "<expected string literal as right");
  EXPECT_EQ(pp("%( 1 == \"a\" %? a %)").substr(0, 33), "<expected number literal as right");
  EXPECT_EQ(pp("%( CONFIG_BPF %? a %)").substr(0, 35), "<expected string, number literal or");
  EXPECT_EQ(pp("%( CONFIG_BPF == 1 %? a %)").substr(0, 34), "<Config option value not a number>");
  EXPECT_EQ(pp("%( foo == 1 %? a %)").substr(0, 17), "<expected 'arch',");
}

} // namespace
} // namespace sonde::parse
