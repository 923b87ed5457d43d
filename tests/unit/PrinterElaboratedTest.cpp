// printElaboratedScript (-p2): stap -p2's layout over what sema recorded.
#include "driver/Frontend.h"
#include "print/ScriptPrinter.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sonde::test {
namespace {

using namespace ast;

std::unique_ptr<ProbePoint> point(std::vector<std::pair<std::string, int64_t>> comps) {
  auto p = std::make_unique<ProbePoint>();
  for (auto &[name, arg] : comps) {
    ProbePointComponent c;
    c.name = name;
    if (arg >= 0) {
      auto n = std::make_unique<NumberLit>();
      n->value = arg;
      c.arg = std::move(n);
    }
    p->components.push_back(std::move(c));
  }
  return p;
}

std::unique_ptr<LocalVar> local(const std::string &name, Type t, bool isParam = false) {
  auto v = std::make_unique<LocalVar>();
  v->name = name;
  v->type = t;
  v->isParam = isParam;
  return v;
}

std::unique_ptr<Symbol> symbol(const std::string &name, Type t) {
  auto s = std::make_unique<Symbol>();
  s->name = name;
  s->type = t;
  return s;
}

// Returns `sym = value` as a statement.
StmtPtr assignment(const std::string &name, int64_t value) {
  auto a = std::make_unique<AssignExpr>();
  a->op = AssignOp::Assign;
  a->lhs = symbol(name, Type::Long);
  auto n = std::make_unique<NumberLit>();
  n->value = value;
  n->type = Type::Long;
  a->rhs = std::move(n);
  a->type = Type::Long;
  auto s = std::make_unique<ExprStmt>();
  s->expr = std::move(a);
  return s;
}

// What sema leaves for:
//   global counts[100], total, w%[10]
//   function add:long(a:long, b) { tmp = a; return tmp + b }
//   probe myalias = timer.s(1) { xx = 1 }
//   probe myalias2 = myalias { yy = 2 }
//   probe begin { counts[1, "a"] = add(1, 2); total <<< 1; w[1] = 1 }
//   probe myalias2 { ... }
//   probe end, timer.ms(100) if (total) { }
struct ElaboratedScript {
  Script script;

  ElaboratedScript() {
    auto counts = std::make_unique<GlobalDecl>();
    counts->name = "counts";
    counts->maxEntries = 100;
    counts->arity = 2;
    counts->type = Type::Long;
    counts->indexTypes = {Type::Long, Type::String};
    auto total = std::make_unique<GlobalDecl>();
    total->name = "total";
    total->arity = 0;
    total->type = Type::Stats;
    auto w = std::make_unique<GlobalDecl>();
    w->name = "w";
    w->wrap = true;
    w->maxEntries = 10;
    w->arity = 1;
    w->type = Type::Long;
    w->indexTypes = {Type::Long};
    script.globals.push_back(std::move(counts));
    script.globals.push_back(std::move(total));
    script.globals.push_back(std::move(w));

    auto add = std::make_unique<FunctionDecl>();
    add->name = "add";
    add->declaredReturn = Type::Long;
    add->returnType = Type::Long;
    add->params.resize(2);
    add->params[0].name = "a";
    add->params[0].declared = Type::Long;
    add->params[1].name = "b";
    add->locals.push_back(local("a", Type::Long, true));
    add->locals.push_back(local("b", Type::Long, true));
    add->locals.push_back(local("tmp", Type::Long));
    add->body = std::make_unique<Block>();
    add->body->stmts.push_back(assignment("tmp", 1));
    script.functions.push_back(std::move(add));
    auto v = std::make_unique<FunctionDecl>();
    v->name = "v";
    v->body = std::make_unique<Block>();
    script.functions.push_back(std::move(v));

    auto inner = std::make_unique<AliasDecl>();
    inner->names.push_back(point({{"myalias", -1}}));
    inner->points.push_back(point({{"timer", -1}, {"s", 1}}));
    inner->body = std::make_unique<Block>();
    auto outer = std::make_unique<AliasDecl>();
    outer->names.push_back(point({{"myalias2", -1}}));
    outer->points.push_back(point({{"myalias", -1}}));
    outer->body = std::make_unique<Block>();
    auto epi = std::make_unique<AliasDecl>();
    epi->names.push_back(point({{"e1", -1}}));
    epi->names.push_back(point({{"e2", -1}}));
    epi->epilogueStyle = true;
    epi->points.push_back(point({{"begin", -1}}));
    epi->points.push_back(point({{"end", -1}}));
    epi->body = std::make_unique<Block>();

    auto userBegin = std::make_unique<ProbeDecl>();
    userBegin->points.push_back(point({{"begin", -1}}));
    userBegin->body = std::make_unique<Block>();
    auto userAlias = std::make_unique<ProbeDecl>();
    userAlias->points.push_back(point({{"myalias2", -1}}));
    userAlias->body = std::make_unique<Block>();
    auto userMulti = std::make_unique<ProbeDecl>();
    userMulti->points.push_back(point({{"end", -1}}));
    userMulti->points.push_back(point({{"timer", -1}, {"ms", 100}}));
    userMulti->points.back()->condition = symbol("total", Type::Long);
    userMulti->body = std::make_unique<Block>();
    auto userEpi = std::make_unique<ProbeDecl>();
    userEpi->points.push_back(point({{"e2", -1}}));
    userEpi->points.back()->optional = true;
    userEpi->body = std::make_unique<Block>();

    auto dp = [&](std::unique_ptr<ProbePoint> pp, ProbeDecl *origin,
                  std::vector<const AliasDecl *> chain) {
      auto d = std::make_unique<DerivedProbe>();
      d->point = std::move(pp);
      d->origin = origin;
      d->originPoint = origin->points.front().get();
      d->aliasChain = std::move(chain);
      d->body = std::make_unique<Block>();
      script.derived.push_back(std::move(d));
      return script.derived.back().get();
    };
    auto *b = dp(point({{"begin", -1}}), userBegin.get(), {});
    b->body->stmts.push_back(assignment("x", 3));
    b->locals.push_back(local("x", Type::Long));
    auto *t = dp(point({{"timer", -1}, {"s", 1}}), userAlias.get(), {outer.get(), inner.get()});
    t->locals.push_back(local("xx", Type::Long));
    t->locals.push_back(local("yy", Type::String));
    auto *e = dp(point({{"timer", -1}, {"ms", 100}}), userMulti.get(), {});
    e->condition = symbol("total", Type::Long);
    // Sema may carry the user's `?` onto the concrete point; -p2 does not show it.
    auto *o = dp(point({{"end", -1}}), userEpi.get(), {epi.get()});
    o->point->optional = true;

    script.aliases.push_back(std::move(inner));
    script.aliases.push_back(std::move(outer));
    script.aliases.push_back(std::move(epi));
    script.probes.push_back(std::move(userBegin));
    script.probes.push_back(std::move(userAlias));
    script.probes.push_back(std::move(userMulti));
    script.probes.push_back(std::move(userEpi));
  }

  std::string print(bool verbose) {
    std::ostringstream out;
    printElaboratedScript(script, out, verbose);
    return out.str();
  }
};

TEST(PrinterElaborated, StapLayout) {
  ElaboratedScript s;
  EXPECT_EQ(s.print(false), "# globals\n"
                            "counts[100]:long [long, string]\n"
                            "total:stats\n"
                            "w%[10]:long [long]\n"
                            "# functions\n"
                            "add:long (a:long, b:long)\n"
                            "  # locals\n"
                            "  tmp:long\n"
                            "v:unknown ()\n"
                            "# probes\n"
                            "begin /* <- begin */\n"
                            "  # locals\n"
                            "  x:long\n"
                            "timer.s(1) /* <- myalias = timer.s(1) <- myalias2 = myalias <- "
                            "myalias2 */\n"
                            "  # locals\n"
                            "  xx:long\n"
                            "  yy:string\n"
                            "timer.ms(100) if (total) /* <- end,timer.ms(100) if (total) */\n"
                            "end /* <- e1 = e2 += begin, end <- e2? */\n");
}

TEST(PrinterElaborated, VerboseAddsBodiesWithTypes) {
  ElaboratedScript s;
  auto call = std::make_unique<FunctionCall>();
  call->name = "add";
  call->type = Type::Long;
  auto stmt = std::make_unique<ExprStmt>();
  stmt->expr = std::move(call);
  s.script.derived[1]->body->stmts.push_back(std::move(stmt));
  EXPECT_EQ(s.print(true), "# globals\n"
                           "counts[100]:long [long, string]\n"
                           "total:stats\n"
                           "w%[10]:long [long]\n"
                           "# functions\n"
                           "add:long (a:long, b:long)\n"
                           "  # locals\n"
                           "  tmp:long\n"
                           "{\n  (tmp) = (1);\n}\n"
                           "v:unknown ()\n"
                           "{}\n"
                           "# probes\n"
                           "begin /* <- begin */\n"
                           "  # locals\n"
                           "  x:long\n"
                           "{\n  (x) = (3);\n}\n"
                           "timer.s(1) /* <- myalias = timer.s(1) <- myalias2 = myalias <- "
                           "myalias2 */\n"
                           "  # locals\n"
                           "  xx:long\n"
                           "  yy:string\n"
                           "{\n  add()/*:long*/;\n}\n"
                           "timer.ms(100) if (total) /* <- end,timer.ms(100) if (total) */\n"
                           "{}\n"
                           "end /* <- e1 = e2 += begin, end <- e2? */\n"
                           "{}\n");
}

// On a script where our elaboration keeps what stap's does, the text is stap's.
TEST(PrinterElaborated, MatchesStapAfterElaboration) {
  std::ostringstream diags;
  FrontendOptions opts;
  opts.loadStdlib = false;
  Frontend fe(diags, opts);
  ASSERT_TRUE(fe.parseUserScript(
      "t.probe",
      "global counts[100], total\n"
      "function add:long (a:long, b) { return a + b }\n"
      "probe myalias = timer.s(1) { xx = 1 }\n"
      "probe myalias2 = myalias { yy = 2 }\n"
      "probe begin { counts[1, \"a\"] = add(1, 2); total <<< 1 }\n"
      "probe myalias2 { println(xx, yy, @count(total)) }\n"
      "probe end, timer.ms(100) { foreach ([k, s] in counts) printf(\"%d %s\", k, s) }\n"))
      << diags.str();
  ASSERT_TRUE(fe.elaborate()) << diags.str();
  std::ostringstream out;
  printElaboratedScript(fe.script(), out, false);
  EXPECT_EQ(out.str(),
            "# globals\n"
            "counts[100]:long [long, string]\n"
            "total:stats\n"
            "# functions\n"
            "add:long (a:long, b:long)\n"
            "# probes\n"
            "begin /* <- begin */\n"
            "timer.s(1) /* <- myalias = timer.s(1) <- myalias2 = myalias <- myalias2 */\n"
            "  # locals\n"
            "  xx:long\n"
            "  yy:long\n"
            "end /* <- end,timer.ms(100) */\n"
            "  # locals\n"
            "  k:long\n"
            "  s:string\n"
            "timer.ms(100) /* <- end,timer.ms(100) */\n"
            "  # locals\n"
            "  k:long\n"
            "  s:string\n");
}

TEST(PrinterElaborated, EmptySectionsAreLeftOut) {
  Script script;
  std::ostringstream out;
  printElaboratedScript(script, out, true);
  EXPECT_EQ(out.str(), "");
}

} // namespace
} // namespace sonde::test
