// Pass 2 type inference: what the fixed point infers for globals, locals,
// parameters, return values and expressions.
#include "SemaTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

using ast::Type;

TEST(SemaTypes, ScalarsArraysAndStats) {
  auto r = elaborateText(R"(global count, names, lat
probe begin {
  count = 1
  names[pid(), "x"] = execname()
  lat <<< count
}
probe end { printf("%d %s %d\n", count, names[1, "x"], @avg(lat)) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.diagnostics, "");
  EXPECT_EQ(r.global("count")->type, Type::Long);
  EXPECT_EQ(r.global("count")->arity, 0);
  const auto *names = r.global("names");
  EXPECT_EQ(names->type, Type::String);
  EXPECT_EQ(names->arity, 2);
  EXPECT_EQ(names->indexTypes, (std::vector<Type>{Type::Long, Type::String}));
  EXPECT_EQ(r.global("lat")->type, Type::Stats);
  EXPECT_TRUE(r.global("count")->read);
  EXPECT_TRUE(r.global("count")->written);
}

TEST(SemaTypes, FunctionsTakeTypesFromCallsAndReturns) {
  auto r = elaborateText(R"(function join(a, b) { return a . ":" . b }
function twice(n) { return n * 2 }
function quiet(x) { x = x + 1 }
probe begin { s = join("a", execname()); n = twice(3); quiet(n); println(s, n) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const auto *join = r.function("join");
  EXPECT_EQ(join->returnType, Type::String);
  EXPECT_EQ(join->locals[0]->type, Type::String);
  EXPECT_EQ(join->locals[1]->type, Type::String);
  EXPECT_EQ(r.function("twice")->returnType, Type::Long);
  // No value returned and none used: a "void" function is fine.
  EXPECT_EQ(r.function("quiet")->returnType, Type::Unknown);
  EXPECT_EQ(r.localType("s"), Type::String);
  EXPECT_EQ(r.localType("n"), Type::Long);
}

TEST(SemaTypes, DeclaredTypesAreFixed) {
  auto r = elaborateText(R"(function f:string(x:long) { return sprint(x) }
probe begin { print(f(1)) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.function("f")->returnType, Type::String);
  EXPECT_EQ(r.function("f")->locals[0]->type, Type::Long);
}

TEST(SemaTypes, ForeachKeysAndValueFollowTheArray) {
  auto r = elaborateText(R"(global a
probe begin { a["k", 2] = "v" }
probe end { foreach (v = [s, n] in a- limit 3) printf("%s %d %s\n", s, n, v) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("s", 1), Type::String);
  EXPECT_EQ(r.localType("n", 1), Type::Long);
  EXPECT_EQ(r.localType("v", 1), Type::String);
}

TEST(SemaTypes, TernaryComparisonRegexAndCatch) {
  auto r = elaborateText(R"(probe begin {
  t = 1 < 2 ? "yes" : "no"
  m = execname() =~ "^ba"
  try { error("x") } catch (msg) { e = msg }
  println(t, m, e)
}
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("t"), Type::String);
  EXPECT_EQ(r.localType("m"), Type::Long);
  EXPECT_EQ(r.localType("msg"), Type::String);
  EXPECT_EQ(r.localType("e"), Type::String);
}

TEST(SemaTypes, PrintfAndPrintForms) {
  auto r = elaborateText(R"(probe begin {
  a = sprintf("%*d|%-5s|%p", 4, 1, "x", 2)
  b = printf("%d\n", 1)
  c = sprintln(1, "x")
  d = sprintd(",", 1, 2)
  print(a, b, c, d)
}
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("a"), Type::String);
  EXPECT_EQ(r.localType("b"), Type::Long);
  EXPECT_EQ(r.localType("c"), Type::String);
  EXPECT_EQ(r.localType("d"), Type::String);
}

TEST(SemaTypes, ContextVariables) {
  SKIP_WITHOUT_PYTHON_MARKERS();
  auto r = elaborateText(R"(probe process("/usr/bin/python3.11").mark("function__entry") {
  a = $arg1; n = $$name; v = $$vars; p = $arg2$
  println(a, n, v, p)
}
probe kernel.trace("sched:sched_switch") { f = $prev_pid; s = $$system; println(f, s) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("a"), Type::Long);
  EXPECT_EQ(r.localType("n"), Type::String);
  EXPECT_EQ(r.localType("v"), Type::String);
  EXPECT_EQ(r.localType("p"), Type::String);
  EXPECT_EQ(r.localType("f", 1), Type::Long);
  EXPECT_EQ(r.localType("s", 1), Type::String);
}

TEST(SemaTypes, EveryExpressionGetsAType) {
  auto r = elaborateText(R"(global h
probe begin { h <<< 3; x = (1 + 2) * -3; y = @count(h) + x; println(sprint(y) . "!") }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  struct Check : ast::RecursiveVisitor {
    using RecursiveVisitor::visit;
    int unknown = 0, seen = 0;
    void check(ast::Expr &e) {
      ++seen;
      if (e.type == Type::Unknown)
        ++unknown;
    }
    void visit(ast::NumberLit &e) override { check(e); }
    void visit(ast::StringLit &e) override { check(e); }
    void visit(ast::Symbol &e) override { check(e); }
    void visit(ast::BinaryExpr &e) override {
      check(e);
      RecursiveVisitor::visit(e);
    }
    void visit(ast::UnaryExpr &e) override {
      check(e);
      RecursiveVisitor::visit(e);
    }
    void visit(ast::AssignExpr &e) override {
      check(e);
      RecursiveVisitor::visit(e);
    }
    void visit(ast::StatOp &e) override {
      check(e);
      RecursiveVisitor::visit(e);
    }
    void visit(ast::PrintFormat &e) override {
      check(e);
      RecursiveVisitor::visit(e);
    }
  } check;
  r.script.derived[0]->body->accept(check);
  EXPECT_GT(check.seen, 10);
  EXPECT_EQ(check.unknown, 0);
}

TEST(SemaTypes, GlobalInitializerFixesTypeAndArity) {
  auto r = elaborateText(R"(global greeting = "hi", most = 10
probe begin { if (most > 0) println(greeting) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.global("greeting")->type, Type::String);
  EXPECT_EQ(r.global("most")->type, Type::Long);
  EXPECT_EQ(r.global("most")->arity, 0);
}

TEST(SemaTypes, TypeTokenRecordsFirstInference) {
  auto r = elaborateText(R"(global g
probe begin {
  g = "x"
}
probe end { println(g) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const auto *g = r.global("g");
  EXPECT_EQ(g->typeTok.loc.line, 3u);
  EXPECT_EQ(g->arityTok.loc.line, 3u);
}

TEST(SemaTypes, EntryTakesItsOperandsType) {
  SKIP_WITHOUT_PYTHON_MARKERS();
  auto r = elaborateText(R"(probe process("/usr/bin/python3.11").mark("gc__done") {
  a = @entry($arg1); s = @entry(execname())
  println(a, s)
}
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("a"), Type::Long);
  EXPECT_EQ(r.localType("s"), Type::String);
}

} // namespace
} // namespace sonde::test
