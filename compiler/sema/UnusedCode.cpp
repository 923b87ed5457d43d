#include "sema/UnusedCode.h"

#include "diag/Diagnostics.h"

namespace sonde::sema {

namespace {

// Keeps the elements `keep` accepts; returns each old index's new one (-1 gone).
template <class T, class Keep>
std::vector<long> filter(std::vector<std::unique_ptr<T>> &v, Keep keep) {
  std::vector<long> newIndex(v.size(), -1);
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!keep(*v[i]))
      continue;
    newIndex[i] = static_cast<long>(out);
    if (out != i)
      v[out] = std::move(v[i]);
    ++out;
  }
  v.resize(out);
  return newIndex;
}

bool isLibrary(const SourceFile *f) { return f && f->isLibrary; }

std::string similarSuffix(const std::string &name, std::vector<std::string> candidates) {
  std::erase(candidates, name);
  std::string sugs = similarNames(name, candidates);
  return sugs.empty() ? "" : " (similar: " + sugs + ")";
}

class UnreachableFinder : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  explicit UnreachableFinder(SemaDiagnostics &diags) : diags_(diags) {}

  void visit(ast::Block &b) override {
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      b.stmts[i]->accept(*this);
      if (i + 1 < b.stmts.size() && endsFlow(*b.stmts[i])) {
        diags_.warning("statement will never be reached", b.stmts[i + 1]->tok);
        break;
      }
    }
  }

private:
  static bool endsFlow(const ast::Stmt &s) {
    return dynamic_cast<const ast::ReturnStmt *>(&s) || dynamic_cast<const ast::NextStmt *>(&s) ||
           dynamic_cast<const ast::BreakStmt *>(&s) || dynamic_cast<const ast::ContinueStmt *>(&s);
  }

  SemaDiagnostics &diags_;
};

// Finds whether an expression can do anything besides produce its value.
class SideEffects : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  bool found = false;

  void visit(ast::AssignExpr &) override { found = true; }
  void visit(ast::IncDecExpr &) override { found = true; }
  // A call may do anything; only a print to the output is known to.
  void visit(ast::FunctionCall &) override { found = true; }
  void visit(ast::PrintFormat &n) override {
    if (!ast::printKindReturnsString(n.kind))
      found = true;
    else
      RecursiveVisitor::visit(n);
  }
};

class UselessExpressionFinder : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  explicit UselessExpressionFinder(SemaDiagnostics &diags) : diags_(diags) {}

  void visit(ast::ExprStmt &s) override {
    SideEffects effects;
    if (s.expr)
      s.expr->accept(effects);
    if (!effects.found)
      diags_.warning("Eliding side-effect-free expression ", s.tok);
  }

private:
  SemaDiagnostics &diags_;
};

} // namespace

void elideUnused(ast::Script &script, const std::unordered_set<const ast::FunctionDecl *> &reached,
                 const SymbolTable &table, SemaDiagnostics &diags, const SemaOptions &opts) {
  using Kind = ast::Script::DeclKind;

  auto functionIndex = filter(script.functions, [&](const ast::FunctionDecl &f) {
    if (reached.count(&f))
      return true;
    if (!isLibrary(f.file))
      diags.warning("Eliding unused function '" + f.name + "'", f.tok);
    return false;
  });

  // A global nobody reads or writes has no type to give it; under -u it goes
  // too, only without the warning.
  auto globalIndex = filter(script.globals, [&](const ast::GlobalDecl &g) {
    if (g.read || g.written)
      return true;
    if (!isLibrary(g.file) && !opts.unoptimized)
      diags.warning("Eliding unused variable '" + g.name + "'", g.tok);
    return false;
  });

  std::unordered_set<const ast::AliasDecl *> expanded;
  for (const auto &p : script.derived)
    expanded.insert(p->aliasChain.begin(), p->aliasChain.end());
  auto aliasIndex = filter(script.aliases, [&](const ast::AliasDecl &a) {
    return !isLibrary(a.file) || expanded.count(&a);
  });
  auto probeIndex =
      filter(script.probes, [&](const ast::ProbeDecl &p) { return table.isUsed(p.file); });

  std::vector<std::pair<Kind, size_t>> order;
  for (auto [kind, i] : script.order) {
    const std::vector<long> *map = kind == Kind::Global     ? &globalIndex
                                   : kind == Kind::Function ? &functionIndex
                                   : kind == Kind::Probe    ? &probeIndex
                                                            : &aliasIndex;
    if (i < map->size() && (*map)[i] >= 0)
      order.emplace_back(kind, static_cast<size_t>((*map)[i]));
  }
  script.order = std::move(order);
}

void warnNeverAssigned(ast::Script &script, SemaDiagnostics &diags) {
  std::vector<std::string> globals;
  for (const auto &g : script.globals)
    if (!g->isPrivate)
      globals.push_back(g->name);

  auto checkLocals = [&](const std::vector<std::unique_ptr<ast::LocalVar>> &locals) {
    for (const auto &l : locals) {
      if (l->assigned || l->isParam)
        continue;
      std::vector<std::string> names = globals;
      for (const auto &other : locals)
        names.push_back(other->name);
      diags.warning("never-assigned local variable '" + l->name + "'" +
                        similarSuffix(l->name, std::move(names)),
                    l->tok);
    }
  };
  for (const auto &p : script.derived)
    checkLocals(p->locals);
  for (const auto &f : script.functions)
    checkLocals(f->locals);

  for (const auto &g : script.globals)
    if (g->read && !g->written && !g->init)
      diags.warning("never-assigned global variable '" + g->name + "'" +
                        similarSuffix(g->name, globals),
                    g->tok);
}

void warnUnreachableStatements(ast::Script &script, SemaDiagnostics &diags) {
  UnreachableFinder finder(diags);
  for (auto &f : script.functions)
    if (f->body)
      f->body->accept(finder);
  for (auto &p : script.derived)
    if (p->body)
      p->body->accept(finder);
}

void warnSideEffectFree(ast::Script &script, SemaDiagnostics &diags) {
  UselessExpressionFinder finder(diags);
  for (auto &f : script.functions)
    if (f->body)
      f->body->accept(finder);
  for (auto &p : script.derived)
    if (p->body)
      p->body->accept(finder);
}

} // namespace sonde::sema
