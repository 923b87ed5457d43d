// Pass 1 tree shapes: precedence, associativity, the language.md 2.6 gotchas and
// every construct of language.md 2.
#include "ParserTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

using namespace sonde::ast;

std::string script(const std::string &text) {
  ParseResult r = parseText(text);
  return r.ok ? dumpScript(r.script) : "ERROR: " + r.diagnostics;
}

// ------------------------------------------------------------ precedence

TEST(ParserTest, PrecedenceLevelsLowestFirst) {
  EXPECT_EQ(dumpExpr("a = b ? c : d"), "(= a (? b c d))");
  EXPECT_EQ(dumpExpr("a ? b : c || d"), "(? a b (|| c d))");
  EXPECT_EQ(dumpExpr("a || b && c"), "(|| a (&& b c))");
  EXPECT_EQ(dumpExpr("a && b | c"), "(&& a (| b c))");
  EXPECT_EQ(dumpExpr("a | b ^ c"), "(| a (^ b c))");
  EXPECT_EQ(dumpExpr("a ^ b & c"), "(^ a (& b c))");
  EXPECT_EQ(dumpExpr("a & b in c"), "(& a (in [b] c))");
  EXPECT_EQ(dumpExpr("a < b in c"), "(in [(< a b)] c)");
  EXPECT_EQ(dumpExpr("a < b << c"), "(< a (<< b c))");
  EXPECT_EQ(dumpExpr("a << b . c"), "(<< a (. b c))");
  EXPECT_EQ(dumpExpr("a . b + c"), "(. a (+ b c))");
  EXPECT_EQ(dumpExpr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(dumpExpr("a * -b"), "(* a (u- b))");
  EXPECT_EQ(dumpExpr("-a++"), "(u- (post++ a))");
  EXPECT_EQ(dumpExpr("++a->b"), "(pre++ (cast a \"\" ->b))");
  EXPECT_EQ(dumpExpr("!a[1]"), "(u! (index a 1))");
}

TEST(ParserTest, AssociativityOfEachLevel) {
  EXPECT_EQ(dumpExpr("a = b = c"), "(= a (= b c))");
  EXPECT_EQ(dumpExpr("a += b <<< c"), "(+= a (<<< b c))");
  EXPECT_EQ(dumpExpr("a ? b : c ? d : e"), "(? a b (? c d e))");
  EXPECT_EQ(dumpExpr("a ? b = 1 : c"), "(? a (= b 1) c)");
  EXPECT_EQ(dumpExpr("a || b || c"), "(|| (|| a b) c)");
  EXPECT_EQ(dumpExpr("a && b && c"), "(&& (&& a b) c)");
  EXPECT_EQ(dumpExpr("a | b | c"), "(| (| a b) c)");
  EXPECT_EQ(dumpExpr("a ^ b ^ c"), "(^ (^ a b) c)");
  EXPECT_EQ(dumpExpr("a & b & c"), "(& (& a b) c)");
  EXPECT_EQ(dumpExpr("a < b < c"), "(< (< a b) c)");
  EXPECT_EQ(dumpExpr("a == b != c"), "(!= (== a b) c)");
  EXPECT_EQ(dumpExpr("a << b >> c >>> d"), "(>>> (>> (<< a b) c) d)");
  EXPECT_EQ(dumpExpr("a . b . c"), "(. (. a b) c)");
  EXPECT_EQ(dumpExpr("a - b + c"), "(+ (- a b) c)");
  EXPECT_EQ(dumpExpr("a / b % c * d"), "(* (% (/ a b) c) d)");
  EXPECT_EQ(dumpExpr("- - ! ~a"), "(u- (u- (u! (u~ a))))");
  EXPECT_EQ(dumpExpr("a !~ \"x\""), "(!~ a \"x\")"); // !~ is one token
}

TEST(ParserTest, AllAssignmentOperators) {
  for (const char *op :
       {"=", "<<<", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", ".="})
    EXPECT_EQ(dumpExpr(std::string("a ") + op + " b"), std::string("(") + op + " a b)") << op;
}

TEST(ParserTest, AllComparisonOperators) {
  for (const char *op : {"<", ">", "<=", ">=", "==", "!="})
    EXPECT_EQ(dumpExpr(std::string("a ") + op + " b"), std::string("(") + op + " a b)") << op;
  EXPECT_EQ(dumpExpr("s =~ \"a\" \"b\""), "(=~ s \"ab\")");
  EXPECT_EQ(dumpExpr("s !~ \"x\""), "(!~ s \"x\")");
}

// ------------------------------------------------------------ gotchas (2.6)

TEST(ParserTest, StatementsNeedNoSeparator) {
  EXPECT_EQ(dumpStatement("{ x = f\n(y) }"), "(block (expr (= x (call f y))))");
  EXPECT_EQ(dumpStatement("{ x = a\n-1 }"), "(block (expr (= x (- a 1))))");
  EXPECT_EQ(dumpStatement("{ x = 1 y = 2 ;; }"), "(block (expr (= x 1)) (expr (= y 2)) (null))");
}

TEST(ParserTest, InBindsLooserThanComparisonAndUnary) {
  EXPECT_EQ(dumpExpr("!k in arr"), "(in [(u! k)] arr)");
  EXPECT_EQ(dumpExpr("a == b in arr"), "(in [(== a b)] arr)");
  EXPECT_EQ(dumpExpr("!(k in arr)"), "(u! (in [k] arr))");
  EXPECT_EQ(dumpExpr("[a, *, \"x\"] in arr"), "(in [a * \"x\"] arr)");
  EXPECT_EQ(dumpExpr("k in @hist_log(s)"), "(in [k] (@hist_log s))");
  EXPECT_EQ(dumpExpr("[x]"), "x"); // a one-element list without `in` is just x
}

TEST(ParserTest, BitAndBindsLooserThanEquality) {
  EXPECT_EQ(dumpExpr("x & mask == 0"), "(& x (== mask 0))");
}

TEST(ParserTest, ForeachValueSortNeedsASpace) {
  EXPECT_EQ(dumpStatement("foreach (v- = k in a) ;"),
            "(foreach (value v) (keys k) a (sort 0-) (null))");
  EXPECT_NE(dumpStatement("foreach (v-=k in a) ;").find("ERROR"), std::string::npos);
}

TEST(ParserTest, LogicalShiftOfLiterals) { EXPECT_EQ(dumpExpr("1 >>> 2"), "(>>> 1 2)"); }

TEST(ParserTest, DanglingElseBindsInnermost) {
  EXPECT_EQ(dumpStatement("if (a) if (b) x = 1; else y = 2"),
            "(if a (if b (expr (= x 1)) (expr (= y 2))))");
}

// ------------------------------------------------------------ literals

TEST(ParserTest, Literals) {
  EXPECT_EQ(dumpExpr("0x10 + 010 + 18446744073709551615"), "(+ (+ 16 8) -1)");
  EXPECT_EQ(dumpExpr("-9223372036854775808"), "(u- -9223372036854775808)");
  EXPECT_EQ(dumpExpr("\"a\" /* c */ \"b\" # x\n \"c\""), "\"abc\"");
  EXPECT_EQ(dumpExpr("\"\\x41\\101\\n\""), "\"AA\\n\"");
}

// ------------------------------------------------------------ declarations

TEST(ParserTest, Globals) {
  EXPECT_EQ(script("global a, b%, c[100], d = -5, e = \"x\" \"y\";\nglobal f%[10]"),
            "(global a)\n(global b %)\n(global c [100])\n(global d = -5)\n"
            "(global e = \"xy\")\n(global f % [10])\n");
  EXPECT_EQ(script("private x\nprivate global y = 1"),
            "(private global x)\n(private global y = 1)\n");
}

TEST(ParserTest, Functions) {
  EXPECT_EQ(script("function f:long(a:string, b) :3 { return a }"),
            "(function f:long (a:string b) :3 (block (return a)))\n");
  EXPECT_EQ(script("private function g() { return; }"),
            "(private function g () (block (return)))\n"); // the ; belongs to return
  EXPECT_EQ(script("function string:string() { return \"\" }\nfunction long() {}"),
            "(function string:string () (block (return \"\")))\n(function long () (block))\n");
}

TEST(ParserTest, ReturnValueOnlyUnlessSemicolonOrBrace) {
  EXPECT_EQ(script("function f() { return\n1 }"), "(function f () (block (return 1)))\n");
  EXPECT_EQ(script("function f() { return }"), "(function f () (block (return)))\n");
}

TEST(ParserTest, DeclarationOrderIsRecorded) {
  ParseResult r = parseText("global a\nprobe begin {}\nfunction f() {}\nprobe x = begin {}\n"
                            "global b");
  ASSERT_TRUE(r.ok);
  using K = Script::DeclKind;
  std::vector<std::pair<K, size_t>> want = {
      {K::Global, 0}, {K::Probe, 0}, {K::Function, 0}, {K::Alias, 0}, {K::Global, 1}};
  EXPECT_EQ(r.script.order, want);
  EXPECT_EQ(r.script.globals[1]->file, r.file.get());
}

// ------------------------------------------------------------ probe points

TEST(ParserTest, ProbePoints) {
  EXPECT_EQ(script("probe begin, end(1), timer.ms(-5), process(\"/bin/ls\").mark(\"x\") {}"),
            "(probe (begin end(1) timer.ms(-5) process(\"/bin/ls\").mark(\"x\")) (block))\n");
  EXPECT_EQ(script("probe kernel.function(\"f\").return ?, foo! if (x > 1) {}"),
            "(probe (kernel.function(\"f\").return? foo! if (> x 1)) (block))\n");
}

TEST(ParserTest, WildcardPiecesGlueOnlyWithoutWhitespace) {
  EXPECT_EQ(script("probe sys_*.a**b.*_x.return {}"), "(probe (sys_*.a**b.*_x.return) (block))\n");
  ParseResult r = parseText("probe foo *bar {}");
  EXPECT_FALSE(r.ok);
}

TEST(ParserTest, KeywordsAreProbePointComponents) {
  EXPECT_EQ(script("probe kernel.function(\"x\").return, a.if.in.print {}"),
            "(probe (kernel.function(\"x\").return a.if.in.print) (block))\n");
}

TEST(ParserTest, BraceAlternationExpands) {
  EXPECT_EQ(script("probe a.{b,c}.d {}"), "(probe (a.b.d a.c.d) (block))\n");
  EXPECT_EQ(script("probe {a,b}.{c,d} {}"), "(probe (a.c a.d b.c b.d) (block))\n");
  EXPECT_EQ(script("probe a.{b,c?} {}"), "(probe (a.b a.c?) (block))\n");
  EXPECT_EQ(script("probe a.{b, {c, d}.e} {}"), "(probe (a.b a.c.e a.d.e) (block))\n");
  // A shared condition is copied into every expanded point.
  ParseResult r = parseText("probe a.{b,c} if (g) {}");
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.script.probes[0]->points.size(), 2u);
  EXPECT_NE(r.script.probes[0]->points[0]->condition.get(),
            r.script.probes[0]->points[1]->condition.get());
  EXPECT_EQ(dump(*r.script.probes[0]->points[1]->condition), "g");
}

TEST(ParserTest, Aliases) {
  EXPECT_EQ(script("probe foo = begin { x = 1 }"),
            "(alias (foo) = (begin) (block (expr (= x 1))))\n");
  EXPECT_EQ(script("probe foo.bar += a, b { }"), "(alias (foo.bar) += (a b) (block))\n");
  EXPECT_EQ(script("probe f = begin { pro() }, { epi() }"),
            "(alias (f) = (begin) (block (expr (call pro))) (block (expr (call epi))))\n");
  EXPECT_EQ(script("probe a = b = begin {}"), "(alias (a b) = (begin) (block))\n");
}

// ------------------------------------------------------------ statements

TEST(ParserTest, Statements) {
  EXPECT_EQ(dumpStatement("while (i < 3) i++"), "(while (< i 3) (expr (post++ i)))");
  EXPECT_EQ(dumpStatement("for (i = 0; i < 3; i++) ;"), "(for (= i 0) (< i 3) (post++ i) (null))");
  EXPECT_EQ(dumpStatement("for (;;) break"), "(for * * * (break))");
  EXPECT_EQ(dumpStatement("{ next; continue }"), "(block (next) (continue))");
  EXPECT_EQ(dumpStatement("delete a[*, 1]"), "(delete (index a * 1))");
  EXPECT_EQ(dumpStatement("try { x } catch (e) { y }"),
            "(try (block (expr x)) (catch e) (block (expr y)))");
  EXPECT_EQ(dumpStatement("try { } catch { }"), "(try (block) (catch) (block))");
}

TEST(ParserTest, ForeachForms) {
  EXPECT_EQ(dumpStatement("foreach (k in a) ;"), "(foreach (keys k) a (null))");
  EXPECT_EQ(dumpStatement("foreach (k+ in a) ;"), "(foreach (keys k) a (sort 1+) (null))");
  EXPECT_EQ(dumpStatement("foreach ([a, b-] in m limit 5) ;"),
            "(foreach (keys a b) m (sort 2-) (limit 5) (null))");
  EXPECT_EQ(dumpStatement("foreach (v = [a, b] in m[*, \"x\"] -) ;"),
            "(foreach (value v) (keys a b) m (slice * \"x\") (sort 0-) (null))");
  EXPECT_EQ(dumpStatement("foreach (k in s @sum+) ;"),
            "(foreach (keys k) s (sort 0+ @sum) (null))");
  EXPECT_EQ(dumpStatement("foreach (b in @hist_linear(s, 0, 100, 10)) ;"),
            "(foreach (keys b) (@hist_linear s 0 100 10) (null))");
}

// ------------------------------------------------------------ values

TEST(ParserTest, CallsArraysAndAtOperators) {
  EXPECT_EQ(dumpExpr("f(1, g())"), "(call f 1 (call g))");
  EXPECT_EQ(dumpExpr("a[1, \"x\"]"), "(index a 1 \"x\")");
  EXPECT_EQ(dumpExpr("@count(s) + @sum(s) + @min(s) + @max(s) + @avg(s)"),
            "(+ (+ (+ (+ (@count s) (@sum s)) (@min s)) (@max s)) (@avg s))");
  EXPECT_EQ(dumpExpr("@variance(s, 3)"), "(@variance s 3)");
  EXPECT_EQ(dumpExpr("@hist_linear(s, -10, 10, 2)[3]"), "(index (@hist_linear s -10 10 2) 3)");
  EXPECT_EQ(dumpExpr("@defined($x) ? @entry($y) : @probewrite(v)"),
            "(? (@defined (target $x)) (@entry (target $y)) (@probewrite v))");
  EXPECT_EQ(dumpExpr("@perf(\"cyc\") + @enum(\"E_X\")"), "(+ (@perf \"cyc\") (@enum \"E_X\"))");
  EXPECT_EQ(dumpExpr("@enumname(x, \"enum e\", \"mod\")"), "(@enumname x \"enum e\" \"mod\")");
}

TEST(ParserTest, TargetVariables) {
  EXPECT_EQ(dumpExpr("$x->a->b[2]"), "(target $x ->a ->b [2])");
  EXPECT_EQ(dumpExpr("&$x->a"), "(target $x ->a &)");
  EXPECT_EQ(dumpExpr("$x$ . $x$$ . $$vars"),
            "(. (. (target $x $) (target $x $$)) (target $$vars))");
  EXPECT_EQ(dumpExpr("$x[1] $"), "(target $x [1] $)");
  EXPECT_EQ(dumpExpr("$x->next$"), "(target $x ->next $)");
  EXPECT_EQ(dumpExpr("$x->return"), "(target $x ->return)");
  EXPECT_EQ(dumpExpr("@cast(p, \"task_struct\", \"kernel\")->pid"),
            "(cast p \"task_struct\" \"kernel\" ->pid)");
  EXPECT_EQ(dumpExpr("@var(\"x@f.c\")->y"), "(@var \"x@f.c\" ->y)");
  EXPECT_EQ(dumpExpr("f()->x"), "(cast (call f) \"\" ->x)");
  EXPECT_EQ(dumpExpr("a[1][2]"), "(cast (index a 1) \"\" [2])");
  EXPECT_EQ(dumpExpr("&x"), "(cast x \"\" &)");
}

TEST(ParserTest, PrintFamily) {
  EXPECT_EQ(dumpExpr("print(1, \"a\")"), "(print 1 \"a\")");
  EXPECT_EQ(dumpExpr("println()"), "(println)");
  EXPECT_EQ(dumpExpr("sprintln(x)"), "(sprintln x)");
  EXPECT_EQ(dumpExpr("printf(\"%d\" \"%s\", 1, \"x\")"), "(printf \"%d%s\" 1 \"x\")");
  EXPECT_EQ(dumpExpr("sprintf(\"x\")"), "(sprintf \"x\")");
  EXPECT_EQ(dumpExpr("printd(\",\", a, b)"), "(printd \",\" a b)");
  EXPECT_EQ(dumpExpr("sprintdln(\"-\", a, b, c)"), "(sprintdln \"-\" a b c)");
  EXPECT_EQ(dumpExpr("print_char(65)"), "(print_char 65)");
  EXPECT_EQ(dumpExpr("print(@hist_log(s))"), "(print (@hist_log s))");
  EXPECT_EQ(dumpExpr("print(@hist_log(s)[2])"), "(print (index (@hist_log s) 2))");
}

TEST(ParserTest, PrintfFormatIsParsedIntoComponents) {
  ParseResult r = parseText("probe begin { printf(\"n=%-5d %%\\n\", x) }");
  ASSERT_TRUE(r.ok);
  auto *s = dynamic_cast<ExprStmt *>(r.script.probes[0]->body->stmts[0].get());
  auto *pf = dynamic_cast<PrintFormat *>(s->expr.get());
  ASSERT_NE(pf, nullptr);
  ASSERT_EQ(pf->components.size(), 5u);
  EXPECT_EQ(pf->components[0].literal, "n=");
  EXPECT_EQ(pf->components[1].conv, FormatComponent::Conv::SignedDec);
  EXPECT_TRUE(pf->components[1].flagMinus);
  EXPECT_EQ(pf->components[1].widthValue, 5);
  EXPECT_EQ(pf->components[3].conv, FormatComponent::Conv::Percent);
  EXPECT_EQ(pf->components[4].literal, "\n");
}

// ------------------------------------------------------------ tokens

TEST(ParserTest, NodesCarryTheirTokens) {
  ParseResult r = parseText("probe begin {\n  x = a + f(1)\n}");
  ASSERT_TRUE(r.ok);
  auto &probe = *r.script.probes[0];
  EXPECT_EQ(probe.tok.kind, TokenKind::Keyword);
  EXPECT_EQ(probe.points[0]->tok.text, "begin");
  auto *s = dynamic_cast<ExprStmt *>(probe.body->stmts[0].get());
  EXPECT_EQ(s->tok.text, "x");
  auto *assign = dynamic_cast<AssignExpr *>(s->expr.get());
  EXPECT_EQ(assign->tok.text, "=");
  EXPECT_EQ(assign->tok.kind, TokenKind::Operator);
  EXPECT_EQ(assign->tok.loc.line, 2u);
  EXPECT_EQ(assign->tok.loc.col, 5u);
  EXPECT_EQ(assign->tok.loc.file, r.file.get());
  auto *plus = dynamic_cast<BinaryExpr *>(assign->rhs.get());
  auto *call = dynamic_cast<FunctionCall *>(plus->rhs.get());
  EXPECT_EQ(call->tok.text, "f");
  EXPECT_EQ(call->tok.loc.col, 11u);
  EXPECT_EQ(call->args[0]->tok.kind, TokenKind::Number);
}

TEST(ParserTest, StringLiteralTokensAreDecoded) {
  ParseResult r = parseText("global s = \"a\\tb\"");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.script.globals[0]->init->tok.kind, TokenKind::String);
  EXPECT_EQ(r.script.globals[0]->init->tok.text, "a\tb");
}

TEST(ParserTest, LibraryFilesMayBeEmpty) {
  SourceFile lib("lib.probe", "# nothing\n", /*isLibrary=*/true);
  std::ostringstream out;
  DiagnosticEngine diags(out);
  Script s;
  EXPECT_TRUE(parseScript(lib, {}, diags, s));
  diags.flush();
  EXPECT_EQ(out.str(), "");
}

} // namespace
} // namespace sonde::test
