// Pass 1 errors: stap's wording, the token each names ("saw:" for the token the
// parser was looking at, "at:" for one it points back to), recovery after an
// error, and limits that keep bad input from crashing.
#include "ParserTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

// "message | saw: token" for each parse error, one per line.
std::string errors(const std::string &text, const ParseOptions &opts = {}) {
  ParseResult r = parseText(text, opts);
  EXPECT_FALSE(r.ok) << text;
  std::string out;
  std::istringstream in(r.diagnostics);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("parse error: ", 0) == 0) {
      out += line.substr(13);
      std::string where;
      if (std::getline(in, where) && where.find(':') != std::string::npos) {
        where = where.substr(where.find_first_not_of(' ') - 1);
        // DiagnosticEngine names the file only on its first mention; spell it
        // out so each line stands alone.
        if (size_t at = where.find(" at :"); at != std::string::npos)
          where.insert(at + 4, "input.probe");
        out += " |" + where;
      }
      out += "\n";
    }
  }
  return out;
}

std::string firstError(const std::string &text) {
  std::string all = errors(text);
  return all.substr(0, all.find('\n'));
}

TEST(ParserErrorTest, ExpectedTokenNamesWhatItSaw) {
  EXPECT_EQ(firstError("probe begin { if (x { } }"),
            "expected ')' | saw: operator '{' at input.probe:1:21");
  EXPECT_EQ(firstError("probe begin { x = (1 + 2; }"),
            "expected ')' | saw: operator ';' at input.probe:1:25");
  EXPECT_EQ(firstError("probe begin { foreach (k a) ; }"),
            "expected 'in' | saw: identifier 'a' at input.probe:1:26");
}

TEST(ParserErrorTest, ExpressionAndStatementExpected) {
  EXPECT_EQ(firstError("probe begin { x = ; }"),
            "expected literal string or number | saw: operator ';' at input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { x = 1 ) }"),
            "expected literal string or number | saw: operator ')' at input.probe:1:21");
  EXPECT_EQ(firstError("probe begin { if (x) else }"),
            "expected statement | saw: keyword at input.probe:1:22");
  EXPECT_EQ(firstError("probe begin { x = 1"), "expected statement | saw: input.probe EOF");
  EXPECT_EQ(firstError("probe begin { x = (1"), "unexpected end-of-file | saw: input.probe EOF");
  EXPECT_EQ(firstError("function f() { return if }"),
            "expected literal string or number | saw: keyword at input.probe:1:23");
}

TEST(ParserErrorTest, ListsNameSeparatorAndTerminator) {
  EXPECT_EQ(firstError("probe begin { f(1 2) }"),
            "expected one of ') ,' | saw: number '2' at input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { print(1 2) }"),
            "expected one of ', )' | saw: number '2' at input.probe:1:23");
  EXPECT_EQ(firstError("probe begin { x = a[1 2] }"),
            "expected one of '] ,' | saw: number '2' at input.probe:1:23");
  // Where an argument is due, an expression is expected.
  EXPECT_EQ(firstError("probe begin { f(1,) }"),
            "expected literal string or number | saw: operator ')' at input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { f(,) }"),
            "expected literal string or number | saw: operator ',' at input.probe:1:17");
  EXPECT_EQ(firstError("function f(a b) {}"),
            "expected ',' or ')' | saw: identifier 'b' at input.probe:1:14");
  EXPECT_EQ(firstError("probe begin { foreach ([a b] in c) ; }"),
            "expected ',' or ']' | saw: identifier 'b' at input.probe:1:27");
}

TEST(ParserErrorTest, TopLevel) {
  EXPECT_EQ(firstError("x = 1"),
            "expected 'probe', 'global', 'private', 'function', or '%{' | saw: identifier 'x' "
            "at input.probe:1:1");
  EXPECT_EQ(firstError("global x y"),
            "expected 'probe', 'global', 'private', 'function', or '%{' | saw: identifier 'y' "
            "at input.probe:1:10");
  EXPECT_EQ(firstError("private probe begin {}"),
            "expected 'function' or identifier | saw: keyword at input.probe:1:9");
  EXPECT_EQ(firstError("global = 3"), "expected identifier | saw: operator '=' at input.probe:1:8");
  EXPECT_EQ(firstError("probe begin"), "expected one of ', { } = +=' | saw: input.probe EOF");
  EXPECT_EQ(firstError("probe foo bar {}"),
            "expected one of ', { } = +=' | saw: identifier 'bar' at input.probe:1:11");
  EXPECT_EQ(firstError("probe a.(1) {}"),
            "expected identifier or '*' or '{' | saw: operator '(' at input.probe:1:9");
  EXPECT_EQ(firstError("function f:int() {}"),
            "expected 'string' or 'long' | saw: identifier 'int' at input.probe:1:12");
}

TEST(ParserErrorTest, EmptyInput) {
  EXPECT_EQ(firstError(""), "Input file 'input.probe' is empty.");
  EXPECT_EQ(firstError("# just a comment\n"), "Input file 'input.probe' is empty.");
  EXPECT_EQ(firstError("%( 1 == 0 %? probe begin {} %)"),
            "Input file 'input.probe' is empty after preprocessing.");
}

TEST(ParserErrorTest, EmbeddedCodeIsNeverSupported) {
  EXPECT_EQ(errors("%{ #include <x.h> %}\nprobe begin {}"),
            "embedded C is not supported | saw: embedded-code at input.probe:1:1\n");
  EXPECT_EQ(errors("function f:long() %{ return 1; %}"),
            "embedded C is not supported | saw: embedded-code at input.probe:1:19\n");
  EXPECT_EQ(errors("probe begin { x = %{ 42 %} }"),
            "embedded C is not supported | saw: embedded-code at input.probe:1:19\n");
  EXPECT_EQ(errors("probe begin { x = @const(\"PAGE_SIZE\") }"),
            "embedded C is not supported | saw: operator '@const' at input.probe:1:19\n");
}

TEST(ParserErrorTest, DeclarationRules) {
  EXPECT_EQ(firstError("probe begin { return 1 }"),
            "found 'return' not in function context | saw: keyword at input.probe:1:15");
  EXPECT_EQ(firstError("global a[3] = 1"),
            "only scalar globals can be initialized | saw: operator '=' at input.probe:1:13");
  EXPECT_EQ(firstError("global a[0]"),
            "array size out of range | saw: number '0' at input.probe:1:10");
  EXPECT_EQ(firstError("global a[2147483648]"),
            "array size out of range | saw: number '2147483648' at input.probe:1:10");
  EXPECT_EQ(firstError("global a, b, a"),
            "duplicate global name | saw: identifier 'a' at input.probe:1:14");
  EXPECT_EQ(firstError("global a\nprivate a"),
            "global versus private variable declaration conflict | saw: identifier 'a' at "
            "input.probe:2:9");
  EXPECT_EQ(firstError("function g() :0 {}"),
            "specified priority must be > 0 | saw: number '0' at input.probe:1:15");
  EXPECT_EQ(firstError("function g() :\"x\" {}"),
            "expected literal number | saw: string 'x' at input.probe:1:15");
  EXPECT_EQ(firstError("function f(a, a) {}"),
            "duplicate parameter names | saw: identifier 'a' at input.probe:1:15");
}

TEST(ParserErrorTest, ProbePointRules) {
  EXPECT_EQ(firstError("probe foo ? = begin {}"),
            "probe point alias name cannot be optional nor sufficient | at: identifier 'foo' at "
            "input.probe:1:7");
  // Like stap, the error names the first component of the point being extended.
  EXPECT_EQ(firstError("probe a.{b?,c}.d {}"),
            "'?', '!' or condition must only be specified in suffix | at: identifier 'a' at "
            "input.probe:1:7");
  EXPECT_EQ(firstError("probe a, b = begin {}"),
            "expected probe point specifier | saw: operator '=' at input.probe:1:12");
  EXPECT_EQ(firstError("probe a += begin {}, {}"),
            "Combined prologue and epilogue cannot be defined with '+=' | saw: operator ',' at "
            "input.probe:1:20");
  EXPECT_EQ(firstError("probe {a?}? {}"),
            "'?' or '!' respecified | saw: operator '?' at input.probe:1:11");
  EXPECT_EQ(firstError("probe {a if (x)} if (y) {}"),
            "condition respecified | saw: operator ')' at input.probe:1:23");
  EXPECT_EQ(firstError("probe timer.ms(x) {}"),
            "expected literal string or number | saw: identifier 'x' at input.probe:1:16");
}

TEST(ParserErrorTest, ForeachRules) {
  EXPECT_EQ(firstError("probe begin { foreach (v+ = [a-] in x) ; }"),
            "multiple sort directives | saw: operator '-' at input.probe:1:31");
  EXPECT_EQ(firstError("probe begin { foreach (a+ in x-) ; }"),
            "multiple sort directives | saw: operator '-' at input.probe:1:31");
  EXPECT_EQ(firstError("probe begin { foreach (a in b @sum) ; }"),
            "expected sort directive | saw: operator ')' at input.probe:1:35");
}

TEST(ParserErrorTest, LiteralsAndOperators) {
  EXPECT_EQ(firstError("probe begin { x = 12ab }"),
            "number invalid or out of range | saw: number '12ab' at input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { x = 18446744073709551616 }"),
            "number invalid or out of range | saw: number '18446744073709551616' at "
            "input.probe:1:19");
  EXPECT_EQ(firstError("global x = -9223372036854775809"),
            "number invalid or out of range | saw: number '9223372036854775809' at "
            "input.probe:1:13");
  EXPECT_EQ(firstError("probe begin {\n  s = \"abc\n}"),
            "Could not find matching closing quote | at: string 'abc' at input.probe:2:7");
  EXPECT_EQ(firstError("probe begin { x = @frob(1) }"),
            "unknown operator @frob | saw: operator '@frob' at input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { x = \"a\" =~ y }"),
            "expected literal string | saw: identifier 'y' at input.probe:1:26");
  EXPECT_EQ(firstError("probe begin { if (s =~ \"b\" == 1) ; }"),
            "expected ')' | saw: operator '==' at input.probe:1:28");
  EXPECT_EQ(firstError("probe begin { x = @count(s, 1) }"),
            "not more than 1 parameter allowed | at: operator ',' at input.probe:1:27");
  EXPECT_EQ(firstError("probe begin { x = @variance(s, 1, 2) }"),
            "not more than 2 parameters allowed | at: operator ',' at input.probe:1:33");
  EXPECT_EQ(firstError("probe begin { x = @hist_linear(s, 0, y, 1) }"),
            "expected number | saw: identifier 'y' at input.probe:1:38");
}

TEST(ParserErrorTest, HistogramsAndTargets) {
  EXPECT_EQ(firstError("probe begin { x = @hist_log(s) }"),
            "base histogram operator where expression expected | at: operator '@hist_log' at "
            "input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { x = $a$->b }"),
            "-> and [ are not accepted for a pretty-printing variable | saw: operator '->' at "
            "input.probe:1:22");
  EXPECT_EQ(firstError("probe begin { x = &(&$a) }"),
            "cannot take address more than once | at: operator '&' at input.probe:1:19");
  EXPECT_EQ(firstError("probe begin { x = @cast(p, \"\")->a }"),
            "expected non-empty string | saw: string '' at input.probe:1:28");
}

TEST(ParserErrorTest, PrintRules) {
  EXPECT_EQ(firstError("probe begin { print() }"),
            "expected literal string or number | saw: operator ')' at input.probe:1:21");
  EXPECT_EQ(firstError("probe begin { printf(fmt, 1) }"),
            "expected literal string | saw: identifier 'fmt' at input.probe:1:22");
  EXPECT_EQ(firstError("probe begin {\n  printd(\",\", 1)\n}"),
            "expected literal string or number | saw: operator '}' at input.probe:3:1");
  EXPECT_EQ(firstError("probe begin { printf(\"%q\\n\", 1) }"),
            "invalid or missing conversion specifier | saw: operator ',' at input.probe:1:28");
  EXPECT_EQ(firstError("probe begin { printf(\"width %5\", 1) }"),
            "trailing incomplete print format conversion | saw: operator ',' at "
            "input.probe:1:32");
  EXPECT_EQ(firstError("probe begin { printf(\"100%\") }"),
            "trailing incomplete print format conversion | saw: operator ')' at "
            "input.probe:1:28");
  EXPECT_EQ(firstError("probe begin { print(@hist_log(s), 1) }"),
            "expected ')' | saw: operator ',' at input.probe:1:33");
}

TEST(ParserErrorTest, ArgumentErrorsPointAtTheArgument) {
  ParseOptions o;
  o.scriptArgs = {"5"};
  EXPECT_EQ(errors("probe begin {\n  println($1 + $2)\n}", o),
            "command line argument out of range [1-1] | at: identifier '$2' at "
            "input.probe:2:16\n");
}

TEST(ParserErrorTest, RecoversAtTheNextDeclaration) {
  EXPECT_EQ(errors("probe begin {\n  x = (1 +\n}\nprobe end {\n  foreach (k a) println(k)\n}\n"
                   "global = 3\nfunction f(a b) { }\nprobe timer.s(1) { println(2) }\n"),
            "expected literal string or number | saw: operator '}' at input.probe:3:1\n"
            "expected 'in' | saw: identifier 'a' at input.probe:5:14\n"
            "expected identifier | saw: operator '=' at input.probe:7:8\n"
            "expected ',' or ')' | saw: identifier 'b' at input.probe:8:14\n");
  ParseResult r = parseText("probe begin { x = }\nprobe end { y = 1 }\nglobal g");
  EXPECT_FALSE(r.ok);
  // The good declarations after the error are still parsed.
  EXPECT_EQ(dumpScript(r.script), "(probe (end) (block (expr (= y 1))))\n(global g)\n");
}

TEST(ParserErrorTest, PreprocessorErrorsAreReportedWhileSkipping) {
  // The %) is seen while skipping after the first error and still reported.
  EXPECT_EQ(errors("probe begin {\n%( arch == \"x86_64\" println(1) %)\n}"),
            "expected '%?' marker for conditional | at: operator '%(' at input.probe:2:1\n"
            "incomplete conditional - missing '%(' | at: operator '%)' at input.probe:2:32\n");
}

TEST(ParserErrorTest, MacroErrorsNameTheMacro) {
  EXPECT_EQ(errors("@define pair(a, b) %( @a + @b %)\nprobe begin { println(@pair(1)) }"),
            "too few parameters for macro '@pair' (expected 2) | at: operator ')' at "
            "input.probe:2:30\n");
}

TEST(ParserErrorTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep =
      "probe begin { x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }";
  std::string e = firstError(deep);
  EXPECT_EQ(e.substr(0, e.find(" |")), "too many nested expressions or statements (limit 1000)");
  std::string ifs = "probe begin { ";
  for (int i = 0; i < 5000; ++i)
    ifs += "if (x) ";
  e = firstError(ifs + "y = 1 }");
  EXPECT_EQ(e.substr(0, e.find(" |")), "too many nested expressions or statements (limit 1000)");
  std::string bangs = "probe begin { x = " + std::string(20000, '!') + "1 }";
  e = firstError(bangs);
  EXPECT_EQ(e.substr(0, e.find(" |")), "too many nested expressions or statements (limit 1000)");
  std::string braces = "probe " + std::string(20000, '{') + "a" + std::string(20000, '}');
  e = firstError(braces + " {}");
  EXPECT_EQ(e.substr(0, e.find(" |")), "too many nested expressions or statements (limit 1000)");
  // Reasonable depth is fine.
  EXPECT_TRUE(
      parseText("probe begin { x = " + std::string(300, '(') + "1" + std::string(300, ')') + " }")
          .ok);
}

TEST(ParserErrorTest, GarbageNeverCrashes) {
  const char *inputs[] = {"probe",
                          "probe {",
                          "probe a.{",
                          "}",
                          "%(",
                          "%)",
                          "@define",
                          "@define x(",
                          "global",
                          "function",
                          "function f(",
                          "probe a = ",
                          "probe b { foreach ( }",
                          "probe b { x = $ }",
                          "\x01\x02\xff",
                          "probe b { @ }",
                          "probe b { printf( }",
                          "probe b { try }"};
  for (const char *in : inputs) {
    ParseResult r = parseText(in);
    EXPECT_FALSE(r.ok) << in;
    EXPECT_NE(r.diagnostics.find("parse error"), std::string::npos) << in;
  }
}

} // namespace
} // namespace sonde::test
