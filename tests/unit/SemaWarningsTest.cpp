// Pass-2 warnings and the elision of unused code.
#include "SemaTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

TEST(SemaWarnings, NeverAssignedLocal) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { total = 1; println(totl + total) }
)"),
      R"(WARNING: never-assigned local variable 'totl' (similar: total): identifier 'totl' at input.probe:1:34
 source: probe begin { total = 1; println(totl + total) }
                                          ^
)");
}

TEST(SemaWarnings, NeverAssignedGlobal) {
  EXPECT_EQ(
      semaDiagnostics(R"(global count, counts
probe begin { counts = 1; println(count + counts) }
)"),
      R"(WARNING: never-assigned global variable 'count' (similar: counts): identifier 'count' at input.probe:1:8
 source: global count, counts
                ^
)");
}

TEST(SemaWarnings, InitializedGlobalIsAssigned) {
  EXPECT_EQ(semaDiagnostics(R"(global count = 5
probe begin { println(count) }
)"),
            R"()");
}

TEST(SemaWarnings, ElidingUnusedGlobalAndFunction) {
  EXPECT_EQ(semaDiagnostics(R"(global used, spare
function helper() { return 1 }
probe begin { used = 1; println(used) }
)"),
            R"(WARNING: Eliding unused function 'helper': identifier 'helper' at input.probe:2:10
 source: function helper() { return 1 }
                  ^
WARNING: Eliding unused variable 'spare': identifier 'spare' at input.probe:1:14
 source: global used, spare
                      ^
)");
}

TEST(SemaWarnings, StatementNeverReached) {
  EXPECT_EQ(semaDiagnostics(R"(function f() {
  return 1
  println("late")
}
probe begin { next; println(f()) }
)"),
            R"(WARNING: statement will never be reached: identifier 'println' at input.probe:3:3
 source:   println("late")
           ^
WARNING: statement will never be reached: identifier 'println' at input.probe:5:21
 source: probe begin { next; println(f()) }
                             ^
)");
}

TEST(SemaWarnings, NeverReachedInLoops) {
  EXPECT_EQ(
      semaDiagnostics(
          R"(probe begin { while (1) { break; println(1) } for (i = 0; i < 3; i++) { continue; println(i) } }
)"),
      R"(WARNING: statement will never be reached: identifier 'println' at input.probe:1:34
 source: probe begin { while (1) { break; println(1) } for (i = 0; i < 3; i++) { continue; println(i) } }
                                          ^
WARNING: statement will never be reached: identifier 'println' at input.probe:1:83
 source: probe begin { while (1) { break; println(1) } for (i = 0; i < 3; i++) { continue; println(i) } }
                                                                                           ^
)");
}

TEST(SemaWarnings, OneWarningPerSourceLocation) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin, end, never { println(unset + 1) }
)"),
      R"(WARNING: never-assigned local variable 'unset': identifier 'unset' at input.probe:1:35
 source: probe begin, end, never { println(unset + 1) }
                                           ^
)");
}

TEST(SemaWarnings, SideEffectFreeExpression) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin {
  n = 4
  n * 2
  println(n)
}
)"),
            R"(WARNING: Eliding side-effect-free expression : identifier 'n' at input.probe:3:3
 source:   n * 2
           ^
)");
}

TEST(SemaWarnings, ElisionRemovesDeclarations) {
  auto r = elaborateText(R"(global used, spare
function helper() { return 1 }
function called() { return 2 }
probe begin { used = called(); println(used) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.global("spare"), nullptr);
  EXPECT_EQ(r.function("helper"), nullptr);
  ASSERT_NE(r.function("called"), nullptr);
  // The declaration order still lists exactly what is left.
  size_t globals = 0, functions = 0, probes = 0;
  for (auto [kind, i] : r.script.order) {
    using Kind = ast::Script::DeclKind;
    if (kind == Kind::Global) {
      EXPECT_LT(i, r.script.globals.size());
      ++globals;
    }
    if (kind == Kind::Function) {
      EXPECT_LT(i, r.script.functions.size());
      ++functions;
    }
    if (kind == Kind::Probe) {
      EXPECT_LT(i, r.script.probes.size());
      ++probes;
    }
  }
  EXPECT_EQ(globals, 1u);
  EXPECT_EQ(functions, 1u);
  EXPECT_EQ(probes, 1u);
}

TEST(SemaWarnings, UnoptimizedKeepsAndChecksUnusedFunctions) {
  SemaOptions opts;
  opts.unoptimized = true;
  auto kept =
      elaborateText("function helper() { return 1 }\nprobe begin { println(1) }\n", {}, opts);
  ASSERT_TRUE(kept.ok) << kept.diagnostics;
  EXPECT_EQ(kept.diagnostics, "");
  ASSERT_NE(kept.function("helper"), nullptr);
  EXPECT_EQ(kept.function("helper")->returnType, ast::Type::Long);

  auto checked = elaborateText(
      "function helper() { return nosuch() }\nprobe begin { println(1) }\n", {}, opts);
  EXPECT_FALSE(checked.ok);
  EXPECT_NE(checked.diagnostics.find("unresolved function nosuch"), std::string::npos)
      << checked.diagnostics;
}

TEST(SemaWarnings, TapsetCodeIsQuiet) {
  auto r =
      elaborateText("probe begin { println(lib()) }\n", {{"lib.probe", R"(global never_set, spare
function lib() { x = never_set; return x + 1; println("dead") }
function lib_unused() { return 2 }
)"}});
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.diagnostics, "");
  EXPECT_EQ(r.function("lib_unused"), nullptr);
  EXPECT_EQ(r.global("spare"), nullptr);
}

TEST(SemaWarnings, SkipBadvarsReadsUnknownContextAsZero) {
  SemaOptions opts;
  opts.skipBadvars = true;
  auto r = elaborateText("probe begin { println($nosuch + 1) }\n", {}, opts);
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(
      r.diagnostics,
      R"(WARNING: Bad $context variable being substituted with literal 0: identifier '$nosuch' at input.probe:1:23
 source: probe begin { println($nosuch + 1) }
                               ^
)");
}

} // namespace
} // namespace sonde::test
