// printParsedScript (-p1): each construct prints as expected and parses back to
// the same tree.
#include "PrinterRoundTrip.h"

#include "ast/AstDump.h"
#include "print/ScriptPrinter.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sonde::test {
namespace {

using namespace ast;

const std::string kHeader = "# parse tree dump\n# file t.probe\n";

// The -p1 text of `src` without the header, after checking the round trip.
std::string p1(const std::string &src) {
  std::string printed;
  EXPECT_TRUE(roundTrips("t.probe", src, {}, &printed)) << "source:\n" << src;
  if (printed.compare(0, kHeader.size(), kHeader) == 0)
    printed.erase(0, kHeader.size());
  return printed;
}

// The printed body of `probe begin { STMTS }`, one statement per line.
std::string stmts(const std::string &body) {
  std::string text = p1("probe begin {\n" + body + "\n}\n");
  const std::string open = "probe begin {\n", close = "}\n";
  if (text.compare(0, open.size(), open) != 0 || text.size() < open.size() + close.size())
    return "unexpected: " + text;
  text = text.substr(open.size(), text.size() - open.size() - close.size());
  // Drop the block's indentation.
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out += line.substr(line.compare(0, 2, "  ") == 0 ? 2 : 0) + '\n';
  return out;
}

TEST(PrinterParsed, Globals) {
  EXPECT_EQ(p1("global a, b%[10], c = \"x\\n\", d = -5, e[100]\n"
               "private global f\nprivate g = 3\n"),
            "global a\nglobal b%[10]\nglobal c = \"x\\n\"\nglobal d = -5\nglobal e[100]\n"
            "private global f\nprivate global g = 3\n");
}

TEST(PrinterParsed, GlobalInitializerLimits) {
  EXPECT_EQ(p1("global lo = -9223372036854775808, hi = 9223372036854775807, "
               "ones = 0xffffffffffffffff\n"),
            "global lo = -9223372036854775808\nglobal hi = 9223372036854775807\n"
            "global ones = -1\n");
}

TEST(PrinterParsed, Functions) {
  EXPECT_EQ(p1("function f:long(a:long, b:string, c):3 { return a }\n"
               "private function g() { }\n"
               "function h:string() { return \"\" }\n"),
            "function f:long(a:long, b:string, c):3 {\n  return a;\n}\n"
            "private function g() {}\n"
            "function h:string() {\n  return \"\";\n}\n");
}

TEST(PrinterParsed, ProbePoints) {
  EXPECT_EQ(p1("global x\n"
               "probe begin, timer.s(1)?, kernel.trace(\"sched:*\")! if (x > 0), end {}\n"
               "probe process(\"/bin/ls\").mark(\"m\"), timer.ms(-1)? {}\n"),
            "global x\n"
            "probe begin, timer.s(1)?, kernel.trace(\"sched:*\")! if ((x) > (0)), end {}\n"
            "probe process(\"/bin/ls\").mark(\"m\"), timer.ms(-1)? {}\n");
}

TEST(PrinterParsed, ProbePointWildcardsAndBraces) {
  EXPECT_EQ(p1("probe kernel.trace(\"syscalls:sys_enter_*\"), a.b*c.{d,e}.f {}\n"),
            "probe kernel.trace(\"syscalls:sys_enter_*\"), a.b*c.d.f, a.b*c.e.f {}\n");
}

TEST(PrinterParsed, Aliases) {
  EXPECT_EQ(p1("probe a = begin { x = 1 }\n"
               "probe b += end, timer.s(2) { }\n"
               "probe c = d = begin { x = 1 }, { y = 2 }\n"),
            "probe a = begin {\n  (x) = (1);\n}\n"
            "probe b += end, timer.s(2) {}\n"
            "probe c = d = begin {\n  (x) = (1);\n}, {\n  (y) = (2);\n}\n");
}

TEST(PrinterParsed, DeclarationOrderIsKept) {
  EXPECT_EQ(p1("probe end {}\nglobal g\nfunction f() {}\nprobe a = begin {}\nglobal h\n"),
            "probe end {}\nglobal g\nfunction f() {}\nprobe a = begin {}\nglobal h\n");
}

TEST(PrinterParsed, SimpleStatements) {
  EXPECT_EQ(stmts("x = 1; ; {} { y = 2 } next; break; continue"),
            "(x) = (1);\n;\n{}\n{\n  (y) = (2);\n}\nnext;\nbreak;\ncontinue;\n");
}

TEST(PrinterParsed, ReturnAndDelete) {
  EXPECT_EQ(p1("global a\nfunction f() { delete a; delete a[1, *]; return; }\n"
               "function g() { return 1 + 2 }\n"),
            "global a\nfunction f() {\n  delete a;\n  delete a[1, *];\n  return;\n}\n"
            "function g() {\n  return (1) + (2);\n}\n");
}

TEST(PrinterParsed, IfElseChains) {
  EXPECT_EQ(stmts("if (a) x = 1; else if (b) x = 2; else { x = 3 }"),
            "if (a)\n  (x) = (1);\nelse if (b)\n  (x) = (2);\nelse {\n  (x) = (3);\n}\n");
  EXPECT_EQ(stmts("if (a) { x = 1 } else x = 2"), "if (a) {\n  (x) = (1);\n} else\n  (x) = (2);\n");
}

TEST(PrinterParsed, DanglingElseBindsInnermost) {
  EXPECT_EQ(stmts("if (a) if (b) x = 1; else x = 2"),
            "if (a)\n  if (b)\n    (x) = (1);\n  else\n    (x) = (2);\n");
  EXPECT_EQ(stmts("if (a) { if (b) x = 1 } else x = 2"),
            "if (a) {\n  if (b)\n    (x) = (1);\n} else\n  (x) = (2);\n");
  EXPECT_EQ(stmts("if (a) while (b) if (c) x = 1; else ;"),
            "if (a)\n  while (b)\n    if (c)\n      (x) = (1);\n    else\n      ;\n");
}

TEST(PrinterParsed, Loops) {
  EXPECT_EQ(stmts("while (i < 3) i++\nfor (;;) break\nfor (i = 0; i < 3; i++) { }\n"
                  "for (; i;) ;"),
            "while ((i) < (3))\n  (i)++;\nfor (;;)\n  break;\n"
            "for ((i) = (0); (i) < (3); (i)++) {}\nfor (; i;)\n  ;\n");
}

TEST(PrinterParsed, Foreach) {
  EXPECT_EQ(p1("global a, b\nprobe begin {\n"
               "foreach (k in a) {}\n"
               "foreach ([k1, k2-] in b[*, 3] limit 5) {}\n"
               "foreach (v- = k in a) {}\n"
               "foreach (v = [k1, k2] in b+ limit n + 1) {}\n"
               "foreach (k in a @sum-) {}\n"
               "foreach (v = k+ in a) {}\n"
               "foreach (k in a-) {}\n"
               "foreach (b in @hist_log(a)) {}\n"
               "}\n"),
            "global a\nglobal b\nprobe begin {\n"
            "  foreach (k in a) {}\n"
            "  foreach ([k1, k2-] in b[*, 3] limit 5) {}\n"
            "  foreach (v- = k in a) {}\n"
            "  foreach (v+ = [k1, k2] in b limit (n) + (1)) {}\n"
            "  foreach (k in a @sum-) {}\n"
            "  foreach (v = k+ in a) {}\n"
            "  foreach (k in a-) {}\n"
            "  foreach (b in @hist_log(a)) {}\n"
            "}\n");
}

TEST(PrinterParsed, TryCatch) {
  EXPECT_EQ(stmts("try { error(\"x\") } catch (e) { println(e) }\ntry {} catch {}"),
            "try {\n  error(\"x\");\n} catch (e) {\n  println(e);\n}\ntry {} catch {}\n");
}

TEST(PrinterParsed, OperatorsAreParenthesised) {
  EXPECT_EQ(stmts("x = a + b * c - d\ny = (a + b) * c\nz = a << 1 >> 2 >>> 3\n"
                  "w = a & b | c ^ ~d\ns = \"a\" . \"b\" . c\nt = !a && b || c"),
            "(x) = (((a) + ((b) * (c))) - (d));\n(y) = (((a) + (b)) * (c));\n"
            "(z) = ((((a) << (1)) >> (2)) >>> (3));\n(w) = (((a) & (b)) | ((c) ^ (~(d))));\n"
            "(s) = (((\"a\") . (\"b\")) . (c));\n(t) = (((!(a)) && (b)) || (c));\n");
}

TEST(PrinterParsed, AssignmentOperators) {
  EXPECT_EQ(stmts("a = b = c; a += 1; a -= 1; a *= 2; a /= 2; a %= 2; a <<= 1; a >>= 1\n"
                  "a &= 1; a ^= 1; a |= 1; s .= \"x\""),
            "(a) = ((b) = (c));\n(a) += (1);\n(a) -= (1);\n(a) *= (2);\n(a) /= (2);\n"
            "(a) %= (2);\n(a) <<= (1);\n(a) >>= (1);\n(a) &= (1);\n(a) ^= (1);\n(a) |= (1);\n"
            "(s) .= (\"x\");\n");
}

TEST(PrinterParsed, ComparisonTernaryRegex) {
  EXPECT_EQ(stmts("x = a < b < c; y = a == b ? c : d ? e : f\n"
                  "z = s =~ \"^a.*\\\\.b$\"; w = s !~ \"x\"; v = a != b; u = a >= b"),
            "(x) = (((a) < (b)) < (c));\n(y) = (((a) == (b)) ? (c) : ((d) ? (e) : (f)));\n"
            "(z) = ((s) =~ \"^a.*\\\\.b$\");\n(w) = ((s) !~ \"x\");\n(v) = ((a) != (b));\n"
            "(u) = ((a) >= (b));\n");
}

TEST(PrinterParsed, Increments) {
  EXPECT_EQ(stmts("x++; ++x; x--; --x; y = x++ + ++x - --x"),
            "(x)++;\n++(x);\n(x)--;\n--(x);\n(y) = ((((x)++) + (++(x))) - (--(x)));\n");
}

TEST(PrinterParsed, NegativeNumbers) {
  EXPECT_EQ(stmts("a = -5; b = - -5; c = -(-5); d = x - -5; e = -x; f = +1"),
            "(a) = (-(5));\n(b) = (-(-(5)));\n(c) = (-(-(5)));\n(d) = ((x) - (-(5)));\n"
            "(e) = (-(x));\n(f) = (+(1));\n");
}

TEST(PrinterParsed, Int64Limits) {
  // 9223372036854775808 and 2^64-1 wrap to INT64_MIN and -1; they print as the
  // unsigned literal that wraps back to the same value.
  EXPECT_EQ(stmts("a = -9223372036854775808; b = 9223372036854775807\n"
                  "c = 0xffffffffffffffff; d = 18446744073709551615; e = 0x8000000000000000"),
            "(a) = (-(9223372036854775808));\n(b) = (9223372036854775807);\n"
            "(c) = (18446744073709551615);\n(d) = (18446744073709551615);\n"
            "(e) = (9223372036854775808);\n");
}

TEST(PrinterParsed, NumberBases) {
  EXPECT_EQ(stmts("a = 0x1F; b = 017; c = 0"), "(a) = (31);\n(b) = (15);\n(c) = (0);\n");
}

TEST(PrinterParsed, StringEscapes) {
  EXPECT_EQ(stmts("s = \"tab\\tnl\\n\\\"q\\\" back\\\\ \\a\\b\\f\\v\\r\"\n"
                  "t = \"\\001\\x7f\\xff\\101\\q\" \"joined\"\nu = \"\""),
            "(s) = (\"tab\\tnl\\n\\\"q\\\" back\\\\ \\a\\b\\f\\v\\r\");\n"
            "(t) = (\"\\001\\177\\377Aqjoined\");\n(u) = (\"\");\n");
}

TEST(PrinterParsed, PrintFamily) {
  EXPECT_EQ(stmts("printf(\"%s %-5d %#x %%\\n\", s, 3, 4); print(1, \"a\"); println()\n"
                  "x = sprintf(\"%*d\", 3, 4); printd(\", \", 1, 2); printdln(\"\\t\", a, b)\n"
                  "y = sprint(a); z = sprintln(a); w = sprintd(\"-\", 1, 2)\n"
                  "v = sprintdln(\"-\", 1, 2); print_char(65); printf(\"plain\")"),
            "printf(\"%s %-5d %#x %%\\n\", s, 3, 4);\nprint(1, \"a\");\nprintln();\n"
            "(x) = (sprintf(\"%*d\", 3, 4));\nprintd(\", \", 1, 2);\nprintdln(\"\\t\", a, b);\n"
            "(y) = (sprint(a));\n(z) = (sprintln(a));\n(w) = (sprintd(\"-\", 1, 2));\n"
            "(v) = (sprintdln(\"-\", 1, 2));\nprint_char(65);\nprintf(\"plain\");\n");
}

TEST(PrinterParsed, AggregatesAndHistograms) {
  EXPECT_EQ(p1("global s, t\nprobe begin {\n"
               "s <<< 1; t[1, \"a\"] <<< 2\n"
               "x = @count(s) + @sum(s) + @min(s) + @max(s) + @avg(s)\n"
               "y = @variance(s) + @variance(s, 3) + @count(t[1, \"a\"])\n"
               "print(@hist_linear(s, -10, 100, 10)); print(@hist_log(s))\n"
               "z = @hist_log(s)[3]; w = @hist_linear(s, 0, 10, 1)[0]\n"
               "}\n"),
            "global s\nglobal t\nprobe begin {\n"
            "  (s) <<< (1);\n  (t[1, \"a\"]) <<< (2);\n"
            "  (x) = (((((@count(s)) + (@sum(s))) + (@min(s))) + (@max(s))) + (@avg(s)));\n"
            "  (y) = (((@variance(s)) + (@variance(s, 3))) + (@count(t[1, \"a\"])));\n"
            "  print(@hist_linear(s, -10, 100, 10));\n  print(@hist_log(s));\n"
            "  (z) = (@hist_log(s)[3]);\n  (w) = (@hist_linear(s, 0, 10, 1)[0]);\n"
            "}\n");
}

TEST(PrinterParsed, InExpressions) {
  EXPECT_EQ(p1("global a, b\nprobe begin {\n"
               "if (1 in a) {}\nif ([1, \"x\"] in b) {}\nif ([*, k + 1] in b) {}\n"
               "if (!(k in a)) {}\nx = k in a && 1\n"
               "}\n"),
            "global a\nglobal b\nprobe begin {\n"
            "  if ([1] in a) {}\n  if ([1, \"x\"] in b) {}\n"
            "  if ([*, ((k) + (1))] in b) {}\n  if (!([k] in a)) {}\n"
            "  (x) = (([k] in a) && (1));\n"
            "}\n");
}

TEST(PrinterParsed, ArraysAndCalls) {
  EXPECT_EQ(p1("global a\nfunction f(x, y) { return x }\nprobe begin {\n"
               "a[1, \"x\", f(1, 2 + 3)] = a[2, \"y\", 0]\nf(a[1, \"x\", 2], -1)\nexit()\n"
               "}\n"),
            "global a\nfunction f(x, y) {\n  return x;\n}\nprobe begin {\n"
            "  (a[1, \"x\", f(1, (2) + (3))]) = (a[2, \"y\", 0]);\n"
            "  f(a[1, \"x\", 2], -(1));\n  exit();\n"
            "}\n");
}

TEST(PrinterParsed, TargetSymbols) {
  EXPECT_EQ(stmts("a = $foo; b = $foo->bar[3]->baz; c = &$foo->bar; d = $foo$; e = $foo$$\n"
                  "f = $foo->bar$; g = $foo[1]$$; h = $$vars; i = $$parms$; j = $return"),
            "(a) = ($foo);\n(b) = ($foo->bar[3]->baz);\n(c) = (&$foo->bar);\n"
            "(d) = ($foo$);\n(e) = ($foo$$);\n(f) = ($foo->bar $);\n(g) = ($foo[1] $$);\n"
            "(h) = ($$vars);\n(i) = ($$parms$);\n(j) = ($return);\n");
}

TEST(PrinterParsed, AtOperators) {
  EXPECT_EQ(
      stmts("a = @cast(p, \"task_struct\", \"kernel\")->pid; b = @cast(p, \"t\")->x[2]$\n"
            "c = &@cast(p, \"t\")->y; d = @var(\"jiffies@kernel/time.c\")\n"
            "e = @var(\"x\", \"/bin/ls\")->f; f = @defined($x) ? @entry($y) : 0\n"
            "g = @perf(\"cycles\"); h = @enum(\"E_ONE\"); i = @enumname(3)\n"
            "j = @enumname(x, \"enum e\"); k = @enumname(x, \"enum e\", \"mod\")"),
      "(a) = (@cast(p, \"task_struct\", \"kernel\")->pid);\n(b) = (@cast(p, \"t\")->x[2] $);\n"
      "(c) = (&@cast(p, \"t\")->y);\n(d) = (@var(\"jiffies@kernel/time.c\"));\n"
      "(e) = (@var(\"x\", \"/bin/ls\")->f);\n(f) = ((@defined($x)) ? (@entry($y)) : (0));\n"
      "(g) = (@perf(\"cycles\"));\n(h) = (@enum(\"E_ONE\"));\n(i) = (@enumname(3));\n"
      "(j) = (@enumname(x, \"enum e\"));\n(k) = (@enumname(x, \"enum e\", \"mod\"));\n");
}

TEST(PrinterParsed, AutocastOnPlainValues) {
  EXPECT_EQ(stmts("a = f()->x; b = &p->y[1]; c = (q)->z$"),
            "(a) = ((f())->x);\n(b) = (&(p)->y[1]);\n(c) = ((q)->z $);\n");
}

TEST(PrinterParsed, Probewrite) {
  EXPECT_EQ(p1("probe a = begin {}, { if (@probewrite(x)) println(x) }\n"),
            "probe a = begin {}, {\n  if (@probewrite(x))\n    println(x);\n}\n");
}

// ------------------------------------------------- trees the parser never builds

std::unique_ptr<NumberLit> number(int64_t v) {
  auto n = std::make_unique<NumberLit>();
  n->value = v;
  return n;
}

std::unique_ptr<Symbol> symbol(const std::string &name) {
  auto s = std::make_unique<Symbol>();
  s->name = name;
  return s;
}

std::unique_ptr<ExprStmt> exprStmt(ExprPtr e) {
  auto s = std::make_unique<ExprStmt>();
  s->expr = std::move(e);
  return s;
}

// `probe begin { <stmt> }` printed.
std::string printProbeWith(StmtPtr stmt) {
  Script script;
  auto probe = std::make_unique<ProbeDecl>();
  auto point = std::make_unique<ProbePoint>();
  point->components.push_back({});
  point->components.back().name = "begin";
  probe->points.push_back(std::move(point));
  probe->body = std::make_unique<Block>();
  probe->body->stmts.push_back(std::move(stmt));
  script.probes.push_back(std::move(probe));
  script.order.push_back({Script::DeclKind::Probe, 0});
  std::ostringstream out;
  printParsedScript(script, out);
  return out.str();
}

TEST(PrinterBuiltTree, NegativeLiteralInExpressionReadsBackAsOneLiteral) {
  auto neg = std::make_unique<UnaryExpr>();
  neg->op = UnaryOp::Neg;
  neg->operand = number(-5);
  auto sub = std::make_unique<BinaryExpr>();
  sub->op = BinaryOp::Sub;
  sub->lhs = number(-1);
  sub->rhs = std::move(neg);
  EXPECT_EQ(printProbeWith(exprStmt(std::move(sub))),
            "# parse tree dump\nprobe begin {\n"
            "  (18446744073709551615) - (-(18446744073709551611));\n}\n");
}

TEST(PrinterBuiltTree, ThenBranchEndingInOpenIfGetsBraces) {
  auto inner = std::make_unique<IfStmt>();
  inner->cond = symbol("b");
  inner->thenStmt = exprStmt(symbol("x"));
  auto loop = std::make_unique<WhileStmt>();
  loop->cond = symbol("c");
  loop->body = std::move(inner);
  auto outer = std::make_unique<IfStmt>();
  outer->cond = symbol("a");
  outer->thenStmt = std::move(loop);
  outer->elseStmt = exprStmt(symbol("y"));
  EXPECT_EQ(printProbeWith(std::move(outer)),
            "# parse tree dump\nprobe begin {\n"
            "  if (a) {\n    while (c)\n      if (b)\n        x;\n  } else\n    y;\n}\n");
}

TEST(PrinterBuiltTree, ScriptWithoutOrderPrintsEveryDeclaration) {
  Script script;
  auto g = std::make_unique<GlobalDecl>();
  g->name = "g";
  script.globals.push_back(std::move(g));
  auto f = std::make_unique<FunctionDecl>();
  f->name = "f";
  f->body = std::make_unique<Block>();
  script.functions.push_back(std::move(f));
  std::ostringstream out;
  printParsedScript(script, out);
  EXPECT_EQ(out.str(), "# parse tree dump\nglobal g\nfunction f() {}\n");
}

// ------------------------------------------------------------------ dumpAst

TEST(PrinterAstDump, DistinguishesWhatThePrinterMustKeep) {
  auto dump = [](const std::string &src) { return parseAndPrint("t.probe", src).dump; };
  EXPECT_NE(dump("probe begin { x = -5 }"), dump("probe begin { x = 5 }"));
  EXPECT_NE(dump("probe begin { x = \"a\\n\" }"), dump("probe begin { x = \"a\\\\n\" }"));
  EXPECT_NE(dump("probe begin { if (a) { if (b) x = 1 } else x = 2 }"),
            dump("probe begin { if (a) if (b) x = 1; else x = 2 }"));
  EXPECT_NE(dump("global a probe begin { foreach (k- in a) {} }"),
            dump("global a probe begin { foreach (k in a-) {} }"));
  EXPECT_NE(dump("probe begin { printf(\"%-5d\", 1) }"),
            dump("probe begin { printf(\"%5d\", 1) }"));
  EXPECT_NE(dump("probe begin? {}"), dump("probe begin! {}"));
  EXPECT_NE(dump("probe begin { x = 1; }"), dump("probe begin { x = 1;; }"));
  // Locations are not part of the tree.
  EXPECT_EQ(dump("probe begin { x = 1 }"), dump("probe   begin {\n\n  x =  1\n}"));
}

TEST(PrinterAstDump, ShowsFormatComponents) {
  std::string dump = parseAndPrint("t.probe", "probe begin { printf(\"a%-08.3ldz\", 1) }").dump;
  EXPECT_NE(dump.find("(text \"a\")"), std::string::npos) << dump;
  EXPECT_NE(dump.find("(conv d flags=-0 width=given:8 prec=given:3 l=1 src=\"%-08.3ld\")"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("(text \"z\")"), std::string::npos) << dump;
}

} // namespace
} // namespace sonde::test
