#include "codegen/DeadLocalStores.h"

#include <unordered_map>
#include <vector>

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

// Every `local = value` statement of a body, the locals its value reads, and
// how many times each local is read in the whole body (values included).
class Reads : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  struct Store {
    const ast::Stmt *stmt;
    ast::LocalVar *local;
    std::vector<const ast::LocalVar *> reads;
  };
  std::vector<Store> stores;
  std::unordered_map<const ast::LocalVar *, size_t> count;

  void visit(ast::ExprStmt &s) override {
    ast::LocalVar *l = storedLocal(s);
    if (!l) {
      RecursiveVisitor::visit(s);
      return;
    }
    // The target is written, not read; its value may read others.
    stores.push_back({&s, l, {}});
    current_ = &stores.back().reads;
    static_cast<ast::AssignExpr &>(*s.expr).rhs->accept(*this);
    current_ = nullptr;
  }
  void visit(ast::Symbol &s) override {
    if (!s.local)
      return;
    ++count[s.local];
    if (current_)
      current_->push_back(s.local);
  }

private:
  std::vector<const ast::LocalVar *> *current_ = nullptr;
};

} // namespace

// A store is dead when nothing but dead stores reads its local. Stores die as
// the reads of their locals drop to zero, and a dead store's own reads drop
// with it: one pass, however long a chain `a = 1; b = a; c = b; ...` is.
std::unordered_set<const ast::Stmt *> deadLocalStores(ast::Stmt &body, ast::Expr *condition) {
  Reads reads;
  body.accept(reads);
  if (condition)
    condition->accept(reads);
  std::unordered_map<const ast::LocalVar *, std::vector<const Reads::Store *>> storesOf;
  for (const Reads::Store &st : reads.stores)
    storesOf[st.local].push_back(&st);
  std::vector<const ast::LocalVar *> unread;
  for (const auto &[local, stores] : storesOf)
    if (!local->isParam && reads.count[local] == 0)
      unread.push_back(local);
  std::unordered_set<const ast::Stmt *> dead;
  while (!unread.empty()) {
    const ast::LocalVar *local = unread.back();
    unread.pop_back();
    for (const Reads::Store *st : storesOf[local]) {
      dead.insert(st->stmt);
      for (const ast::LocalVar *r : st->reads)
        if (--reads.count[r] == 0 && !r->isParam && storesOf.count(r))
          unread.push_back(r);
    }
  }
  return dead;
}

} // namespace sonde::codegen
