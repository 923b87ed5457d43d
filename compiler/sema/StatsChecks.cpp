#include "sema/StatsChecks.h"

#include <unordered_map>

namespace sonde::sema {

namespace {

struct StatsShape {
  int64_t varianceShift = 0;
  enum class Hist : uint8_t { None, Log, Linear } hist = Hist::None;
  int64_t low = 0, high = 0, width = 0;
};

const ast::GlobalDecl *aggregateOf(const ast::Expr *e) {
  if (auto *s = dynamic_cast<const ast::Symbol *>(e))
    return s->global;
  if (auto *a = dynamic_cast<const ast::ArrayIndex *>(e); a && a->base)
    return a->base->global;
  return nullptr;
}

class StatsCollector : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  explicit StatsCollector(SemaDiagnostics &diags) : diags_(diags) {}

  void visit(ast::StatOp &n) override {
    RecursiveVisitor::visit(n);
    int64_t shift = n.varianceShift.value_or(0);
    if (shift < 0 || shift > 62) {
      diags_.error("bit shift (" + std::to_string(shift) + ") out of range <0..62>", n.tok);
      return;
    }
    const ast::GlobalDecl *g = aggregateOf(n.operand.get());
    if (!g)
      return;
    auto [it, fresh] = shapes_.try_emplace(g);
    if (fresh) {
      it->second.varianceShift = shift;
      return;
    }
    if (n.fn != ast::StatFn::Variance)
      return;
    if (it->second.varianceShift != 0 && it->second.varianceShift != shift)
      diags_.error("conflicting bit shifts declared (previously " +
                       std::to_string(it->second.varianceShift) + ")",
                   n.tok);
    else
      it->second.varianceShift = shift;
  }

  void visit(ast::HistOp &n) override {
    RecursiveVisitor::visit(n);
    const ast::GlobalDecl *g = aggregateOf(n.operand.get());
    if (!g)
      return;
    StatsShape &s = shapes_[g];
    auto kind = n.linear ? StatsShape::Hist::Linear : StatsShape::Hist::Log;
    if (s.hist == StatsShape::Hist::None) {
      s.hist = kind;
      s.low = n.low;
      s.high = n.high;
      s.width = n.width;
      return;
    }
    bool same = s.hist == kind && (kind == StatsShape::Hist::Log ||
                                   (s.low == n.low && s.high == n.high && s.width == n.width));
    if (!same)
      diags_.error("multiple histogram types declared on '" + g->name + "'", n.tok);
  }

private:
  SemaDiagnostics &diags_;
  std::unordered_map<const ast::GlobalDecl *, StatsShape> shapes_;
};

} // namespace

void checkStatsDeclarations(ast::Script &script, SemaDiagnostics &diags) {
  StatsCollector c(diags);
  for (auto &f : script.functions)
    if (f->body)
      f->body->accept(c);
  for (auto &p : script.derived)
    if (p->body)
      p->body->accept(c);
}

} // namespace sonde::sema
