// The pieces pass 2 is built from: the built-in function table, the probe
// family table, AST cloning, and the speed of the whole pass.
#include "SemaTestSupport.h"

#include "ast/Clone.h"
#include "diag/Diagnostics.h"
#include "parse/Parser.h"
#include "probes/ProbeFamilies.h"
#include "sema/Builtins.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <unistd.h>

namespace sonde::test {
namespace {

using ast::Type;

TEST(SemaBuiltins, SignaturesAndOverloads) {
  const auto *exec = sema::findBuiltin("execname", 0);
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->returnType(), Type::String);
  EXPECT_EQ(exec->scope, sema::BuiltinScope::Anywhere);

  const auto *us1 = sema::findBuiltin("user_string", 1);
  const auto *us2 = sema::findBuiltin("user_string", 2);
  ASSERT_TRUE(us1 && us2);
  EXPECT_EQ(us2->paramType(0), Type::Long);
  EXPECT_EQ(us2->paramType(1), Type::String);
  EXPECT_EQ(sema::findBuiltin("user_string", 3), nullptr);
  EXPECT_EQ(us1->scope, sema::BuiltinScope::User);

  // tokenize(input, delim) and tokenize(delim) are separate rows.
  EXPECT_EQ(sema::findBuiltin("tokenize", 1)->params, "S");
  EXPECT_EQ(sema::findBuiltin("tokenize", 2)->params, "SS");

  EXPECT_EQ(sema::findBuiltin("exit", 0)->returnType(), Type::Unknown);
  EXPECT_EQ(sema::findBuiltin("kernel_string", 1)->scope, sema::BuiltinScope::Kernel);
  EXPECT_EQ(sema::findBuiltinByName("assert")->maxArgs(), 2u);
}

TEST(SemaBuiltins, NotPlannedFunctionsAreAbsent) {
  for (const char *name :
       {"task_current", "printk", "ftrace", "raise", "mdelay", "panic", "set_user_long"})
    EXPECT_EQ(sema::findBuiltinByName(name), nullptr) << name;
  // Extensions language.md §6 allows (issue 3 asks for abs).
  for (const char *name : {"abs", "min", "max"})
    EXPECT_NE(sema::findBuiltinByName(name), nullptr) << name;
  const auto &names = sema::builtinNames();
  EXPECT_EQ(std::count(names.begin(), names.end(), "tokenize"), 1);
}

TEST(SemaBuiltins, CallsAreTypeChecked) {
  auto r = elaborateText(R"(probe begin {
  n = strlen(execname()); s = substr("abc", 1, 1); t = tokenize("a b", " ")
  u = tokenize(" "); c = ctime(); d = ctime(0)
  println(n, s, t, u, c, d)
}
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("n"), Type::Long);
  EXPECT_EQ(r.localType("s"), Type::String);
  EXPECT_EQ(r.localType("u"), Type::String);
  EXPECT_EQ(r.localType("d"), Type::String);
  EXPECT_NE(semaDiagnostics("probe begin { println(strlen(1)) }\n")
                .find("type mismatch: expected string but found long: number '1'"),
            std::string::npos);
}

TEST(SemaBuiltins, ScriptFunctionsShadowBuiltins) {
  auto r = elaborateText(R"(function execname() { return 7 }
probe begin { x = execname(); println(x) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("x"), Type::Long);
}

TEST(SemaProbeFamilies, TableAndContextVariables) {
  size_t unsupported = 0;
  for (const auto &f : probes::families())
    unsupported += !f.supported();
  EXPECT_GT(unsupported, 10u);

  if (access("/usr/bin/python3.11", R_OK) != 0)
    GTEST_SKIP() << "needs /usr/bin/python3.11 (its SDT markers)";
  auto r =
      elaborateText(R"(probe process("/usr/bin/python3.11").mark("gc__start") { println($arg1) }
probe kernel.trace("sched:sched_switch") { println($next_pid) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const auto &dp = *r.script.derived[0];
  const auto *marker = probes::familyOf(*dp.point);
  ASSERT_NE(marker, nullptr);
  ASSERT_NE(dp.markerSite, nullptr);
  ast::TargetSymbol sym;
  sym.name = "$arg2"; // gc__start has one argument
  auto beyond =
      probes::contextVariable(marker, dp.point.get(), {dp.markerSite.get(), nullptr}, sym);
  EXPECT_FALSE(beyond.found);
  EXPECT_EQ(beyond.error, "invalid marker argument number 2 (gc__start has 1)");
  sym.name = "$arg13";
  EXPECT_FALSE(
      probes::contextVariable(marker, dp.point.get(), {dp.markerSite.get(), nullptr}, sym).found);
  sym.name = "$$provider";
  EXPECT_EQ(probes::contextVariable(marker, nullptr, {}, sym).type, Type::String);
  sym.name = "$arg1";
  EXPECT_FALSE(probes::contextVariable(nullptr, nullptr, {}, sym).found); // a function body
}

TEST(SemaClone, DeepCopyIsIndependent) {
  std::ostringstream out;
  DiagnosticEngine diags(out);
  SourceFile file("clone.probe", "probe begin { x[1] = \"a\" . sprintf(\"%d\", 2); "
                                 "foreach (k in x- limit 3) { if (k) next } }\n");
  ast::Script script;
  ASSERT_TRUE(parseScript(file, {}, diags, script)) << out.str();
  const ast::Block &original = *script.probes[0]->body;
  auto copy = ast::cloneBlock(original);
  ASSERT_EQ(copy->stmts.size(), original.stmts.size());
  EXPECT_NE(copy->stmts[0].get(), original.stmts[0].get());
  auto *assign = dynamic_cast<ast::AssignExpr *>(
      dynamic_cast<ast::ExprStmt *>(copy->stmts[0].get())->expr.get());
  ASSERT_NE(assign, nullptr);
  auto *orig = dynamic_cast<ast::AssignExpr *>(
      dynamic_cast<ast::ExprStmt *>(original.stmts[0].get())->expr.get());
  EXPECT_NE(assign->lhs.get(), orig->lhs.get());
  EXPECT_EQ(assign->tok.loc.col, orig->tok.loc.col);
  auto *fe = dynamic_cast<ast::ForeachStmt *>(copy->stmts[1].get());
  ASSERT_NE(fe, nullptr);
  EXPECT_EQ(fe->sortDir, ast::SortDir::Descending);
  ASSERT_NE(fe->limit, nullptr);
  EXPECT_NE(fe->body, nullptr);
  // Typing the copy leaves the original alone.
  assign->type = Type::String;
  EXPECT_EQ(orig->type, Type::Unknown);
}

// A 5,000-line script: inference is a handful of linear passes, not a
// quadratic walk, so elaboration stays far below 0.3 s even in a debug build.
TEST(SemaPerformance, FiveThousandLines) {
  std::string text = "global counts, names, total, lat\n";
  for (int i = 0; i < 420; ++i) {
    std::string n = std::to_string(i), prev = std::to_string(i > 0 ? i - 1 : 0);
    text += "function f" + n + "(a, b) {\n  x = a + " + n + "\n";
    text += "  s = sprintf(\"%d-%s\", x, b)\n  names[s, x] = b . \"" + n + "\"\n";
    text += i > 0 ? "  if (x > 10) return f" + prev + "(x - 1, s)\n" : "  if (x > 10) return x\n";
    text += "  return x * 2\n}\n";
  }
  for (int i = 0; i < 300; ++i) {
    std::string n = std::to_string(i);
    text += "probe timer.ms(" + std::to_string(i + 1) + ") {\n";
    text += "  counts[execname(), " + n + "]++\n  total += f" + n + "(" + n + ", \"p\")\n";
    text += "  lat <<< total\n";
    text += "  foreach ([e, k] in counts- limit 5) printf(\"%s %d %d\\n\", e, k, counts[e, k])\n";
    text += "  y = total > 5 ? \"big\" : \"small\"\n  println(y)\n}\n";
  }
  text += "probe end { print(@hist_log(lat)) }\n";
  ASSERT_GT(std::count(text.begin(), text.end(), '\n'), 5000);

  std::ostringstream out;
  DiagnosticEngine diags(out);
  SourceFile file("big.probe", text);
  ast::Script script;
  ASSERT_TRUE(parseScript(file, {}, diags, script)) << out.str();
  auto start = std::chrono::steady_clock::now();
  bool ok = elaborate(script, diags, {});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  diags.flush();
  ASSERT_TRUE(ok) << out.str().substr(0, 2000);
  EXPECT_LT(seconds, 0.3);
  EXPECT_EQ(script.derived.size(), 301u);
}

} // namespace
} // namespace sonde::test
