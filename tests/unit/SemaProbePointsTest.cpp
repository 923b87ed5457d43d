// Probe points: which concrete points a script's probes become (Script::derived)
// after wildcard matching and alias expansion, and the errors on the way.
#include "SemaTestSupport.h"

#include "probes/ProbeFamilies.h"
#include "probes/marker/MarkerCatalog.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

using Points = std::vector<std::string>;

// The statements of a derived body, as the kinds of their first statement's
// tokens: enough to see which alias/user blocks came in which order.
std::vector<std::string> blockOrder(const ast::DerivedProbe &p) {
  std::vector<std::string> out;
  for (const auto &s : p.body->stmts) {
    auto *b = dynamic_cast<const ast::Block *>(s.get());
    if (!b || b->stmts.empty())
      continue;
    auto *e = dynamic_cast<const ast::ExprStmt *>(b->stmts[0].get());
    auto *call = e ? dynamic_cast<const ast::PrintFormat *>(e->expr.get()) : nullptr;
    auto *arg = call && !call->args.empty()
                    ? dynamic_cast<const ast::StringLit *>(call->args[0].get())
                    : nullptr;
    out.push_back(arg ? arg->value : "?");
  }
  return out;
}

TEST(SemaProbePoints, ConcreteFamilies) {
  SKIP_WITHOUT_PYTHON_MARKERS();
  auto r = elaborateText(R"(probe begin, begin(-5), end(3), error, never { print(1) }
probe timer.s(1), timer.ms(10).randomize(2), timer.hz(100), timer.jiffies(5) { print(1) }
probe timer.profile.tick { print(1) }
probe process("/usr/bin/python3.11").mark("gc__start") { print(1) }
probe process("/usr/bin/python3.11").provider("pyth*").mark("gc__d*") { print(1) }
probe process.begin, process(12).end, process("ls").thread.begin, process.thread.end { print(1) }
probe kernel.trace("sched:sched_switch") { print(1) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.points(),
            (Points{"begin", "begin(-5)", "end(3)", "error", "never", "timer.s(1)",
                    "timer.ms(10).randomize(2)", "timer.hz(100)", "timer.jiffies(5)",
                    "timer.profile.tick", "process(\"/usr/bin/python3.11\").mark(\"gc__start\")",
                    "process(\"/usr/bin/python3.11\").provider(\"python\").mark(\"gc__done\")",
                    "process.begin", "process(12).end", "process(\"ls\").thread.begin",
                    "process.thread.end", "kernel.trace(\"sched:sched_switch\")"}));
  EXPECT_EQ(probes::familyOf(*r.script.derived[5]->point)->kind, probes::ProbeKind::Timer);
  EXPECT_EQ(probes::familyOf(*r.script.derived[10]->point)->kind, probes::ProbeKind::Marker);
  ASSERT_NE(r.script.derived[10]->markerSite, nullptr);
  EXPECT_EQ(r.script.derived[10]->markerSite->site.args.size(), 1u);
}

// Marker points that cannot be resolved against ELF notes.
TEST(SemaProbePoints, MarkerPointsNeedABinary) {
  auto r = elaborateText(R"(probe process(999999999).provider("p").mark("m*") { print(1) }
probe process.mark("y") { print(1) }
)");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("no match (no such process 999999999)"), std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("-c CMD or -x PID"), std::string::npos) << r.diagnostics;
}

TEST(SemaProbePoints, WildcardsSkipPointsThatDoNotWork) {
  // timer.us(5) and timer.ns(5) are out of range: a wildcard just skips them.
  auto r = elaborateText("probe timer.*(5) { print(1) }\n");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.points(), (Points{"timer.hz(5)", "timer.jiffies(5)", "timer.ms(5)", "timer.msec(5)",
                                "timer.s(5)", "timer.sec(5)"}));
  EXPECT_EQ(r.script.derived[0]->originPoint->str(), "timer.*(5)");
}

TEST(SemaProbePoints, OptionalAndSufficient) {
  EXPECT_EQ(elaborateText("probe nosuch?, begin { print(1) }\n").points(), Points{"begin"});
  EXPECT_EQ(elaborateText("probe begin!, end { print(1) }\n").points(), Points{"begin!"});
  EXPECT_EQ(elaborateText("probe nosuch!, end { print(1) }\n").points(), Points{"end"});
  EXPECT_EQ(elaborateText("probe timer.ms(5)? { print(1) }\n").points(), Points{"timer.ms(5)?"});
}

TEST(SemaProbePoints, EachPointGetsItsOwnBodyAndLocals) {
  auto r = elaborateText("probe begin, end { x = 1; print(x) }\n");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  ASSERT_EQ(r.script.derived.size(), 2u);
  EXPECT_NE(r.script.derived[0]->body.get(), r.script.derived[1]->body.get());
  EXPECT_NE(r.script.derived[0]->body.get(), r.script.probes[0]->body.get());
  ASSERT_EQ(r.script.derived[1]->locals.size(), 1u);
  EXPECT_EQ(r.script.derived[1]->locals[0]->type, ast::Type::Long);
  EXPECT_EQ(r.script.derived[0]->origin, r.script.probes[0].get());
}

TEST(SemaProbePoints, PrologueEpilogueAndCombinedAliases) {
  auto r = elaborateText(R"(probe pro = begin { print("pro") }
probe epi += end { print("epi") }
probe both = never { print("first") }, { print("last") }
probe pro, epi, both { print("user") }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  ASSERT_EQ(r.points(), (Points{"begin", "end", "never"}));
  EXPECT_EQ(blockOrder(*r.script.derived[0]), (std::vector<std::string>{"pro", "user"}));
  EXPECT_EQ(blockOrder(*r.script.derived[1]), (std::vector<std::string>{"user", "epi"}));
  EXPECT_EQ(blockOrder(*r.script.derived[2]), (std::vector<std::string>{"first", "user", "last"}));
  ASSERT_EQ(r.script.derived[0]->aliasChain.size(), 1u);
  EXPECT_EQ(r.script.derived[0]->aliasChain[0], r.script.aliases[0].get());
  EXPECT_EQ(r.script.derived[0]->originPoint->str(), "pro");
}

TEST(SemaProbePoints, PrologueVariablesAreUserLocals) {
  auto r = elaborateText(R"(probe myalias = begin { name = execname() }
probe myalias { println(name) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.diagnostics, "");
  EXPECT_EQ(r.localType("name"), ast::Type::String);
}

TEST(SemaProbePoints, NestedAliasesExpandInnermostFirst) {
  auto r = elaborateText(R"(probe outer = inner { print("outer") }
probe inner = timer.s(1) { print("inner") }
probe outer { print("user") }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  ASSERT_EQ(r.points(), Points{"timer.s(1)"});
  EXPECT_EQ(blockOrder(*r.script.derived[0]), (std::vector<std::string>{"inner", "outer", "user"}));
  ASSERT_EQ(r.script.derived[0]->aliasChain.size(), 2u);
  EXPECT_EQ(r.script.derived[0]->aliasChain[0]->names[0]->str(), "outer");
  EXPECT_EQ(r.script.derived[0]->aliasChain[1]->names[0]->str(), "inner");
}

TEST(SemaProbePoints, ConditionsAreAndedThroughAliases) {
  auto r = elaborateText(R"(global on, off
probe a = begin if (on) { }
probe a if (!off) { print(1) }
probe end { on = 1; off = 0 }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const auto *cond = dynamic_cast<const ast::LogicalExpr *>(r.script.derived[0]->condition.get());
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->op, ast::LogicalOp::And);
  EXPECT_NE(dynamic_cast<const ast::Symbol *>(cond->lhs.get()), nullptr);    // the alias's `on`
  EXPECT_NE(dynamic_cast<const ast::UnaryExpr *>(cond->rhs.get()), nullptr); // the user's `!off`
  EXPECT_EQ(cond->type, ast::Type::Long);
}

TEST(SemaProbePoints, AliasSuffix) {
  auto r = elaborateText(R"(probe app = process("/bin/app") { }
probe app.begin, app.end { print(1) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.points(), (Points{"process(\"/bin/app\").begin", "process(\"/bin/app\").end"}));
}

TEST(SemaProbePoints, AliasWildcards) {
  auto one = elaborateText(R"(probe app.start = begin { }
probe app.stop = end { }
probe app.* { print(1) }
)");
  ASSERT_TRUE(one.ok) << one.diagnostics;
  EXPECT_EQ(one.points(), (Points{"begin", "end"}));

  auto any = elaborateText(R"(probe app.deep.start = begin { }
probe app.** { print(1) }
)");
  ASSERT_TRUE(any.ok) << any.diagnostics;
  EXPECT_EQ(any.points(), Points{"begin"});
}

TEST(SemaProbePoints, ProbewriteSeesTheUserBody) {
  auto r =
      elaborateText(R"(probe watched += begin { printf("%d %d\n", @probewrite(x), @probewrite(y)) }
probe watched { x = 1 }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const auto &body = *r.script.derived[0]->body;
  ASSERT_EQ(body.stmts.size(), 2u);
  auto *epi = dynamic_cast<const ast::Block *>(body.stmts[1].get());
  ASSERT_NE(epi, nullptr);
  auto *stmt = dynamic_cast<const ast::ExprStmt *>(epi->stmts[0].get());
  auto *printf = dynamic_cast<const ast::PrintFormat *>(stmt->expr.get());
  ASSERT_EQ(printf->args.size(), 2u);
  auto *x = dynamic_cast<const ast::NumberLit *>(printf->args[0].get());
  auto *y = dynamic_cast<const ast::NumberLit *>(printf->args[1].get());
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->value, 1);
  EXPECT_EQ(y->value, 0);
}

TEST(SemaProbePoints, LibraryAliasesPullTheirFileIn) {
  auto r = elaborateText("probe lib.tick { println(ticks) }\n",
                         {{"lib.probe", R"(global ticks
probe lib.tick = timer.s(1) { ticks++ }
probe begin { ticks = 0 }
function helper() { return 1 }
probe unused.alias = end { }
)"},
                          {"other.probe", "probe begin { print(\"other\") }\n"}});
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.diagnostics, ""); // unused tapset code goes quietly
  // The alias's file joins the script, with its begin probe; other.probe does not.
  EXPECT_EQ(r.points(), (Points{"timer.s(1)", "begin"}));
  EXPECT_EQ(r.function("helper"), nullptr);
  ASSERT_EQ(r.script.aliases.size(), 1u);
  EXPECT_EQ(r.script.probes.size(), 2u);
  EXPECT_EQ(r.global("ticks")->type, ast::Type::Long);
}

TEST(SemaProbePoints, LibraryFunctionsAndGlobalsPullTheirFileIn) {
  auto r =
      elaborateText("probe timer.s(1) { println(lib_count()) }\n", {{"lib.probe", R"(global calls
function lib_count() { return ++calls }
probe end { println(calls) }
)"}});
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.points(), (Points{"timer.s(1)", "end"}));
  EXPECT_EQ(r.function("lib_count")->returnType, ast::Type::Long);
}

TEST(SemaProbePoints, PrivateLibraryGlobalsStayInTheirFile) {
  auto r = elaborateText("probe begin { secret = \"mine\"; println(secret, peek()) }\n",
                         {{"lib.probe", R"(private global secret
function peek() { secret = 42; return secret }
)"}});
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.localType("secret"), ast::Type::String); // the user's own local
  EXPECT_EQ(r.global("secret")->type, ast::Type::Long);
}

TEST(SemaProbePointErrors, IntervalOutOfRange) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.ms(0) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.ms(0) { print(1) }
                      ^

semantic error: interval value out of range (1, 86400000)

)");
}

TEST(SemaProbePointErrors, MicrosecondRange) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.us(99) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.us(99) { print(1) }
                      ^

semantic error: interval value out of range (100, 86400000000)

)");
}

TEST(SemaProbePointErrors, RandomizationOutOfRange) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.ms(10).randomize(20) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.ms(10).randomize(20) { print(1) }
                      ^

semantic error: randomization value out of range

)");
}

TEST(SemaProbePointErrors, HzMustBePositive) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.hz(0) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.hz(0) { print(1) }
                      ^

semantic error: frequency must be greater than 0

)");
}

TEST(SemaProbePointErrors, JiffiesInterval) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.jiffies(1000001) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.jiffies(1000001) { print(1) }
                      ^

semantic error: invalid interval for jiffies timer

)");
}

TEST(SemaProbePointErrors, JiffiesRandomize) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.jiffies(10).randomize(11) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.jiffies(10).randomize(11) { print(1) }
                      ^

semantic error: invalid randomize for jiffies timer

)");
}

TEST(SemaProbePointErrors, HzTakesNoRandomize) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.hz(10).randomize(1) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.hz(10).randomize(1) { print(1) }
                      ^

semantic error: invalid suffix for probe: identifier 'randomize' at input.probe:1:20
        source: probe timer.hz(10).randomize(1) { print(1) }
                                   ^

)");
}

TEST(SemaProbePointErrors, InvalidSuffix) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin.x { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'begin' at input.probe:1:7
        source: probe begin.x { print(1) }
                      ^

semantic error: invalid suffix for probe: identifier 'x' at input.probe:1:13
        source: probe begin.x { print(1) }
                            ^

)");
}

TEST(SemaProbePointErrors, WrongArgumentKind) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin("x") { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'begin' at input.probe:1:7
        source: probe begin("x") { print(1) }
                      ^

semantic error: probe point mismatch (similar: begin, end, never, error, kernel): identifier 'begin' at input.probe:1:7
        source: probe begin("x") { print(1) }
                      ^

)");
}

TEST(SemaProbePointErrors, Truncated) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer { print(1) }
                      ^

semantic error: probe point truncated (follow:  hz(number) jiffies(number) ms(number) msec(number) ns(number) nsec(number) profile s(number) sec(number) us(number) usec(number)): identifier 'timer' at input.probe:1:7
        source: probe timer { print(1) }
                      ^

)");
}

TEST(SemaProbePointErrors, MismatchSuggests) {
  EXPECT_EQ(semaDiagnostics(R"(probe tmer.s(1) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'tmer' at input.probe:1:7
        source: probe tmer.s(1) { print(1) }
                      ^

semantic error: probe point mismatch (similar: timer, never, end, error, kernel): identifier 'tmer' at input.probe:1:7
        source: probe tmer.s(1) { print(1) }
                      ^

)");
}

TEST(SemaProbePointErrors, NoWildcardMatches) {
  EXPECT_EQ(semaDiagnostics(R"(probe timer.zz*(1) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:7
        source: probe timer.zz*(1) { print(1) }
                      ^

semantic error: probe point mismatch: didn't find any wildcard matches (similar: hz, s, ms, ns, us): identifier 'zz*' at input.probe:1:13
        source: probe timer.zz*(1) { print(1) }
                            ^

)");
}

TEST(SemaProbePointErrors, DwarfNotSupported) {
  EXPECT_EQ(semaDiagnostics(R"(probe kernel.function("vfs_read").return { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'kernel' at input.probe:1:7
        source: probe kernel.function("vfs_read").return { print(1) }
                      ^

semantic error: probe point not supported: keyword at input.probe:1:14
        source: probe kernel.function("vfs_read").return { print(1) }
                             ^

)");
}

TEST(SemaProbePointErrors, ProcessFunctionNotSupported) {
  EXPECT_EQ(semaDiagnostics(R"(probe process("/bin/ls").function("main") { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'process' at input.probe:1:7
        source: probe process("/bin/ls").function("main") { print(1) }
                      ^

semantic error: probe point not supported: keyword at input.probe:1:26
        source: probe process("/bin/ls").function("main") { print(1) }
                                         ^

)");
}

TEST(SemaProbePointErrors, ProcfsNotSupported) {
  EXPECT_EQ(semaDiagnostics(R"(probe procfs("x").read { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'procfs' at input.probe:1:7
        source: probe procfs("x").read { print(1) }
                      ^

semantic error: probe point not supported: identifier 'procfs' at input.probe:1:7
        source: probe procfs("x").read { print(1) }
                      ^

)");
}

TEST(SemaProbePointErrors, AliasTargetFails) {
  EXPECT_EQ(semaDiagnostics(R"(probe a = timer.ms(0) { print(1) }
probe a { print(3) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:11
        source: probe a = timer.ms(0) { print(1) }
                          ^

semantic error: interval value out of range (1, 86400000)

semantic error: while resolving probe point: identifier 'a' at input.probe:2:7
        source: probe a { print(3) }
                      ^

semantic error: no match

)");
}

TEST(SemaProbePointErrors, RecursiveAlias) {
  EXPECT_EQ(semaDiagnostics(R"(probe a = b { print(1) }
probe b = a { print(2) }
probe a { print(3) }
)"),
            R"(semantic error: while resolving probe point: identifier 'b' at input.probe:1:11
        source: probe a = b { print(1) }
                          ^

semantic error: recursive loop in alias expansion of b at input.probe:1:11

semantic error: while resolving probe point: identifier 'a' at input.probe:2:11
        source: probe b = a { print(2) }
                          ^

semantic error: no match

semantic error: while resolving probe point: identifier 'a' at input.probe:3:7
        source: probe a { print(3) }
                      ^

semantic error: no match

Number of similar error messages suppressed: 1.
Rerun with -v to see them.
)");
}

TEST(SemaProbePointErrors, AliasWithBadSuffix) {
  EXPECT_EQ(semaDiagnostics(R"(probe a = begin { }
probe a.return { }
)"),
            R"(semantic error: while resolving probe point: identifier 'a' at input.probe:2:7
        source: probe a.return { }
                      ^

semantic error: invalid suffix for probe: keyword at input.probe:2:9
        source: probe a.return { }
                        ^

)");
}

TEST(SemaProbePointErrors, RequiredPointAfterOptional) {
  EXPECT_EQ(semaDiagnostics(R"(probe nosuch?, timer.ms(0) { print(1) }
)"),
            R"(semantic error: while resolving probe point: identifier 'timer' at input.probe:1:16
        source: probe nosuch?, timer.ms(0) { print(1) }
                               ^

semantic error: interval value out of range (1, 86400000)

)");
}

TEST(SemaProbePointErrors, AllOptionalPointsFail) {
  EXPECT_EQ(semaDiagnostics(R"(probe nosuch? { print(1) }
)"),
            R"(semantic error: no probes found

)");
}

TEST(SemaProbePointErrors, AliasNameWithWildcard) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe a.* = begin { }
probe a.b { }
)"),
      R"(semantic error: invalid use of wildcard probe point component: identifier 'a' at input.probe:1:7
        source: probe a.* = begin { }
                      ^

semantic error: while resolving probe point: identifier 'a' at input.probe:2:7
        source: probe a.b { }
                      ^

semantic error: probe point mismatch (similar: end, begin, error, never, timer): identifier 'a' at input.probe:2:7
        source: probe a.b { }
                      ^

)");
}

} // namespace
} // namespace sonde::test
