#include "codegen/DeadLocalStores.h"

namespace sonde::codegen {

namespace {

// Whether an expression does anything besides producing its value (an error
// aside): assignments, ++/--, calls of script functions, printing.
class HasEffects : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  bool found = false;
  void visit(ast::AssignExpr &) override { found = true; }
  void visit(ast::IncDecExpr &) override { found = true; }
  void visit(ast::FunctionCall &c) override {
    if (!c.callees.empty())
      found = true;
    RecursiveVisitor::visit(c);
  }
  void visit(ast::PrintFormat &p) override {
    if (!ast::printKindReturnsString(p.kind))
      found = true;
    RecursiveVisitor::visit(p);
  }
};

// A statement `local = value;` with a value without effects, or null.
ast::LocalVar *storedLocal(const ast::Stmt &s) {
  auto *e = dynamic_cast<const ast::ExprStmt *>(&s);
  auto *assign = e ? dynamic_cast<ast::AssignExpr *>(e->expr.get()) : nullptr;
  if (!assign || assign->op != ast::AssignOp::Assign)
    return nullptr;
  auto *target = dynamic_cast<ast::Symbol *>(assign->lhs.get());
  if (!target || !target->local)
    return nullptr;
  HasEffects effects;
  assign->rhs->accept(effects);
  return effects.found ? nullptr : target->local;
}

// The locals read outside the statements currently considered dead.
class LocalReads : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  LocalReads(const std::unordered_set<const ast::Stmt *> &dead) : dead_(dead) {}
  std::unordered_set<const ast::LocalVar *> read;

  void visit(ast::ExprStmt &s) override {
    if (dead_.count(&s))
      return;
    if (storedLocal(s)) {
      // The target is written, not read; its value may read others.
      static_cast<ast::AssignExpr &>(*s.expr).rhs->accept(*this);
      return;
    }
    RecursiveVisitor::visit(s);
  }
  void visit(ast::Symbol &s) override {
    if (s.local)
      read.insert(s.local);
  }

private:
  const std::unordered_set<const ast::Stmt *> &dead_;
};

// Every `local = value` statement of a body.
class Stores : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  std::vector<std::pair<const ast::Stmt *, ast::LocalVar *>> found;
  void visit(ast::ExprStmt &s) override {
    if (ast::LocalVar *l = storedLocal(s))
      found.emplace_back(&s, l);
  }
};

} // namespace

std::unordered_set<const ast::Stmt *> deadLocalStores(ast::Stmt &body, ast::Expr *condition) {
  Stores stores;
  body.accept(stores);
  std::unordered_set<const ast::Stmt *> dead;
  for (bool changed = true; changed;) {
    changed = false;
    LocalReads reads(dead);
    body.accept(reads);
    if (condition)
      condition->accept(reads);
    for (auto [stmt, local] : stores.found)
      if (!local->isParam && !reads.read.count(local) && dead.insert(stmt).second)
        changed = true;
  }
  return dead;
}

} // namespace sonde::codegen
