#include "sema/ForeachMutation.h"

#include "sema/CallGraph.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace sonde::sema {

namespace {

using GlobalSet = std::unordered_set<const ast::GlobalDecl *>;

// Calls mutated() for every array element written, deleted or accumulated
// into, and every whole array deleted.
class MutationWalker : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  void visit(ast::AssignExpr &n) override {
    lvalue(n.lhs.get());
    RecursiveVisitor::visit(n);
  }
  void visit(ast::IncDecExpr &n) override {
    lvalue(n.operand.get());
    RecursiveVisitor::visit(n);
  }
  void visit(ast::DeleteStmt &n) override {
    if (auto *s = dynamic_cast<ast::Symbol *>(n.target.get()); s && s->global)
      mutated(*s->global, s->tok);
    lvalue(n.target.get());
    RecursiveVisitor::visit(n);
  }

protected:
  virtual void mutated(const ast::GlobalDecl &g, const Token &tok) = 0;

private:
  void lvalue(ast::Expr *e) {
    auto *a = dynamic_cast<ast::ArrayIndex *>(e);
    if (a && a->base && a->base->global)
      mutated(*a->base->global, a->tok);
  }
};

// The arrays each function body mutates itself, and whom it calls.
class DirectMutations : public MutationWalker {
public:
  using MutationWalker::visit;
  GlobalSet mutations;
  std::vector<const ast::FunctionDecl *> callees;

  void visit(ast::FunctionCall &n) override {
    callees.insert(callees.end(), n.callees.begin(), n.callees.end());
    MutationWalker::visit(n);
  }

protected:
  void mutated(const ast::GlobalDecl &g, const Token &) override { mutations.insert(&g); }
};

class IterationCheck : public MutationWalker {
public:
  using MutationWalker::visit;
  IterationCheck(SemaDiagnostics &diags,
                 const std::unordered_map<const ast::FunctionDecl *, GlobalSet> &byFunction)
      : diags_(diags), byFunction_(byFunction) {}

  void visit(ast::ForeachStmt &n) override {
    const ast::GlobalDecl *g = n.base ? n.base->global : nullptr;
    if (g)
      iterated_.push_back(g);
    MutationWalker::visit(n);
    if (g)
      iterated_.pop_back();
  }

  void visit(ast::FunctionCall &n) override {
    for (const auto *f : n.callees) {
      auto it = byFunction_.find(f);
      if (it == byFunction_.end())
        continue;
      for (const auto *g : iterated_)
        if (it->second.count(g))
          diags_.error("function call modifies var '" + g->name + "' during 'foreach' iteration",
                       n.tok);
    }
    MutationWalker::visit(n);
  }

protected:
  void mutated(const ast::GlobalDecl &g, const Token &tok) override {
    if (std::find(iterated_.begin(), iterated_.end(), &g) != iterated_.end())
      diags_.error("variable '" + g.name + "' modified during 'foreach' iteration", tok);
  }

private:
  SemaDiagnostics &diags_;
  const std::unordered_map<const ast::FunctionDecl *, GlobalSet> &byFunction_;
  std::vector<const ast::GlobalDecl *> iterated_;
};

} // namespace

void checkForeachMutations(ast::Script &script, SemaDiagnostics &diags) {
  std::unordered_map<const ast::FunctionDecl *, GlobalSet> direct;
  std::unordered_map<const ast::FunctionDecl *, std::vector<const ast::FunctionDecl *>> calls;
  std::vector<const ast::FunctionDecl *> functions;
  for (auto &f : script.functions) {
    DirectMutations d;
    if (f->body)
      f->body->accept(d);
    direct[f.get()] = std::move(d.mutations);
    calls[f.get()] = std::move(d.callees);
    functions.push_back(f.get());
  }
  // Close over the call graph: a function mutates what its callees mutate.
  std::unordered_map<const ast::FunctionDecl *, GlobalSet> mutates = closeOverCalls<GlobalSet>(
      functions, [&](const ast::FunctionDecl *f) -> const auto & { return calls[f]; },
      [&](const ast::FunctionDecl *f) -> const GlobalSet & { return direct[f]; });
  IterationCheck check(diags, mutates);
  for (auto &f : script.functions)
    if (f->body)
      f->body->accept(check);
  for (auto &p : script.derived)
    if (p->body)
      p->body->accept(check);
}

} // namespace sonde::sema
