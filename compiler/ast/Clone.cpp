#include "ast/Clone.h"

#include <type_traits>

namespace sonde::ast {

namespace {

// Visits the original and leaves its copy in `expr` or `stmt`. The visitor
// interface takes non-const nodes; the original is never modified.
class Cloner : public Visitor {
public:
  explicit Cloner(const CloneOptions &opts) : opts_(opts) {}

  ExprPtr expr(const Expr *e) {
    if (!e)
      return nullptr;
    const_cast<Expr *>(e)->accept(*this);
    return std::move(expr_);
  }

  StmtPtr stmt(const Stmt *s) {
    if (!s)
      return nullptr;
    const_cast<Stmt *>(s)->accept(*this);
    return std::move(stmt_);
  }

  // Copies of a node whose static type the caller knows (a Symbol stays a
  // Symbol); @probewrite replacement never applies to these.
  template <class T> std::unique_ptr<T> same(const std::unique_ptr<T> &n) {
    if (!n)
      return nullptr;
    if constexpr (std::is_base_of_v<Expr, T>)
      return std::unique_ptr<T>(static_cast<T *>(expr(n.get()).release()));
    else
      return std::unique_ptr<T>(static_cast<T *>(stmt(n.get()).release()));
  }

  std::vector<ExprPtr> exprs(const std::vector<ExprPtr> &v) {
    std::vector<ExprPtr> out;
    out.reserve(v.size());
    for (const auto &e : v)
      out.push_back(expr(e.get())); // null entries (wildcards) stay null
    return out;
  }

  std::vector<TargetComponent> components(const std::vector<TargetComponent> &cs) {
    std::vector<TargetComponent> out;
    out.reserve(cs.size());
    for (const auto &c : cs)
      out.push_back({c.kind, c.tok, c.member, expr(c.index.get())});
    return out;
  }

  std::unique_ptr<ProbePoint> point(const ProbePoint &p) {
    auto out = std::make_unique<ProbePoint>();
    out->tok = p.tok;
    for (const auto &c : p.components)
      out->components.push_back({c.tok, c.name, expr(c.arg.get())});
    out->optional = p.optional;
    out->sufficient = p.sufficient;
    out->condition = expr(p.condition.get());
    return out;
  }

  // ------------------------------------------------------------ expressions

  void visit(NumberLit &n) override {
    copyExpr(n, [&](NumberLit &c) { c.value = n.value; });
  }
  void visit(StringLit &n) override {
    copyExpr(n, [&](StringLit &c) { c.value = n.value; });
  }
  void visit(BinaryExpr &n) override {
    copyExpr(n, [&](BinaryExpr &c) {
      c.op = n.op;
      c.lhs = expr(n.lhs.get());
      c.rhs = expr(n.rhs.get());
    });
  }
  void visit(LogicalExpr &n) override {
    copyExpr(n, [&](LogicalExpr &c) {
      c.op = n.op;
      c.lhs = expr(n.lhs.get());
      c.rhs = expr(n.rhs.get());
    });
  }
  void visit(UnaryExpr &n) override {
    copyExpr(n, [&](UnaryExpr &c) {
      c.op = n.op;
      c.operand = expr(n.operand.get());
    });
  }
  void visit(CompareExpr &n) override {
    copyExpr(n, [&](CompareExpr &c) {
      c.op = n.op;
      c.lhs = expr(n.lhs.get());
      c.rhs = expr(n.rhs.get());
    });
  }
  void visit(RegexMatch &n) override {
    copyExpr(n, [&](RegexMatch &c) {
      c.negated = n.negated;
      c.lhs = expr(n.lhs.get());
      c.pattern = n.pattern;
    });
  }
  void visit(TernaryExpr &n) override {
    copyExpr(n, [&](TernaryExpr &c) {
      c.cond = expr(n.cond.get());
      c.thenExpr = expr(n.thenExpr.get());
      c.elseExpr = expr(n.elseExpr.get());
    });
  }
  void visit(AssignExpr &n) override {
    copyExpr(n, [&](AssignExpr &c) {
      c.op = n.op;
      c.lhs = expr(n.lhs.get());
      c.rhs = expr(n.rhs.get());
    });
  }
  void visit(IncDecExpr &n) override {
    copyExpr(n, [&](IncDecExpr &c) {
      c.prefix = n.prefix;
      c.increment = n.increment;
      c.operand = expr(n.operand.get());
    });
  }
  void visit(Symbol &n) override {
    copyExpr(n, [&](Symbol &c) {
      c.name = n.name;
      c.global = n.global;
      c.local = n.local;
    });
  }
  void visit(ArrayIndex &n) override {
    copyExpr(n, [&](ArrayIndex &c) {
      c.base = same(n.base);
      c.hist = same(n.hist);
      c.indexes = exprs(n.indexes);
    });
  }
  void visit(InExpr &n) override {
    copyExpr(n, [&](InExpr &c) {
      c.keys = exprs(n.keys);
      c.base = same(n.base);
      c.hist = same(n.hist);
    });
  }
  void visit(FunctionCall &n) override {
    copyExpr(n, [&](FunctionCall &c) {
      c.name = n.name;
      c.args = exprs(n.args);
      c.callees = n.callees;
    });
  }
  void visit(PrintFormat &n) override {
    copyExpr(n, [&](PrintFormat &c) {
      c.kind = n.kind;
      c.format = n.format;
      c.components = n.components;
      c.args = exprs(n.args);
      c.hist = same(n.hist);
    });
  }
  void visit(StatOp &n) override {
    copyExpr(n, [&](StatOp &c) {
      c.fn = n.fn;
      c.operand = expr(n.operand.get());
      c.varianceShift = n.varianceShift;
    });
  }
  void visit(HistOp &n) override {
    copyExpr(n, [&](HistOp &c) {
      c.linear = n.linear;
      c.operand = expr(n.operand.get());
      c.low = n.low;
      c.high = n.high;
      c.width = n.width;
    });
  }
  void visit(TargetSymbol &n) override {
    copyExpr(n, [&](TargetSymbol &c) {
      c.name = n.name;
      c.components = components(n.components);
      c.addressOf = n.addressOf;
      c.prettyDepth = n.prettyDepth;
    });
  }
  void visit(CastOp &n) override {
    copyExpr(n, [&](CastOp &c) {
      c.operand = expr(n.operand.get());
      c.typeName = n.typeName;
      c.module = n.module;
      c.components = components(n.components);
      c.addressOf = n.addressOf;
      c.prettyDepth = n.prettyDepth;
    });
  }
  void visit(AtVar &n) override {
    copyExpr(n, [&](AtVar &c) {
      c.varName = n.varName;
      c.module = n.module;
      c.components = components(n.components);
      c.addressOf = n.addressOf;
      c.prettyDepth = n.prettyDepth;
    });
  }
  void visit(DefinedOp &n) override {
    copyExpr(n, [&](DefinedOp &c) { c.operand = expr(n.operand.get()); });
  }
  void visit(EntryOp &n) override {
    copyExpr(n, [&](EntryOp &c) { c.operand = expr(n.operand.get()); });
  }
  void visit(ProbewriteOp &n) override {
    if (opts_.replaceProbewrite) {
      expr_ = opts_.replaceProbewrite(n);
      return;
    }
    copyExpr(n, [&](ProbewriteOp &c) { c.var = same(n.var); });
  }
  void visit(SpecialAtOp &n) override {
    copyExpr(n, [&](SpecialAtOp &c) {
      c.kind = n.kind;
      c.operand = expr(n.operand.get());
      c.strings = n.strings;
    });
  }

  // ------------------------------------------------------------- statements

  void visit(Block &n) override {
    copyStmt(n, [&](Block &c) {
      c.stmts.reserve(n.stmts.size());
      for (const auto &s : n.stmts)
        c.stmts.push_back(stmt(s.get()));
    });
  }
  void visit(NullStmt &n) override {
    copyStmt(n, [](NullStmt &) {});
  }
  void visit(ExprStmt &n) override {
    copyStmt(n, [&](ExprStmt &c) { c.expr = expr(n.expr.get()); });
  }
  void visit(IfStmt &n) override {
    copyStmt(n, [&](IfStmt &c) {
      c.cond = expr(n.cond.get());
      c.thenStmt = stmt(n.thenStmt.get());
      c.elseStmt = stmt(n.elseStmt.get());
    });
  }
  void visit(WhileStmt &n) override {
    copyStmt(n, [&](WhileStmt &c) {
      c.cond = expr(n.cond.get());
      c.body = stmt(n.body.get());
    });
  }
  void visit(ForStmt &n) override {
    copyStmt(n, [&](ForStmt &c) {
      c.init = expr(n.init.get());
      c.cond = expr(n.cond.get());
      c.incr = expr(n.incr.get());
      c.body = stmt(n.body.get());
    });
  }
  void visit(ForeachStmt &n) override {
    copyStmt(n, [&](ForeachStmt &c) {
      c.value = same(n.value);
      for (const auto &k : n.keys)
        c.keys.push_back(same(k));
      c.base = same(n.base);
      c.hist = same(n.hist);
      c.slice = exprs(n.slice);
      c.sortDir = n.sortDir;
      c.sortColumn = n.sortColumn;
      c.sortAggregate = n.sortAggregate;
      c.limit = expr(n.limit.get());
      c.body = stmt(n.body.get());
    });
  }
  void visit(TryStmt &n) override {
    copyStmt(n, [&](TryStmt &c) {
      c.tryBlock = same(n.tryBlock);
      c.catchVar = same(n.catchVar);
      c.catchBlock = same(n.catchBlock);
    });
  }
  void visit(ReturnStmt &n) override {
    copyStmt(n, [&](ReturnStmt &c) { c.value = expr(n.value.get()); });
  }
  void visit(DeleteStmt &n) override {
    copyStmt(n, [&](DeleteStmt &c) { c.target = expr(n.target.get()); });
  }
  void visit(BreakStmt &n) override {
    copyStmt(n, [](BreakStmt &) {});
  }
  void visit(ContinueStmt &n) override {
    copyStmt(n, [](ContinueStmt &) {});
  }
  void visit(NextStmt &n) override {
    copyStmt(n, [](NextStmt &) {});
  }

private:
  template <class T, class F> void copyExpr(const T &n, F fill) {
    auto c = std::make_unique<T>();
    c->tok = n.tok;
    c->type = n.type;
    fill(*c);
    expr_ = std::move(c);
  }

  template <class T, class F> void copyStmt(const T &n, F fill) {
    auto c = std::make_unique<T>();
    c->tok = n.tok;
    fill(*c);
    stmt_ = std::move(c);
  }

  const CloneOptions &opts_;
  ExprPtr expr_;
  StmtPtr stmt_;
};

} // namespace

ExprPtr cloneExpr(const Expr &e, const CloneOptions &opts) { return Cloner(opts).expr(&e); }

StmtPtr cloneStmt(const Stmt &s, const CloneOptions &opts) { return Cloner(opts).stmt(&s); }

std::unique_ptr<Block> cloneBlock(const Block &b, const CloneOptions &opts) {
  StmtPtr s = Cloner(opts).stmt(&b);
  return std::unique_ptr<Block>(static_cast<Block *>(s.release()));
}

std::unique_ptr<ProbePoint> cloneProbePoint(const ProbePoint &p, const CloneOptions &opts) {
  return Cloner(opts).point(p);
}

} // namespace sonde::ast
