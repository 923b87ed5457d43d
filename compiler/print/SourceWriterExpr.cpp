// SourceWriter: expressions, numbers and probe points.
#include "print/SourceWriter.h"

#include <ostream>

namespace sonde::print {

using namespace ast;

void SourceWriter::expr(const Expr &e) { dispatch(e); }

void SourceWriter::operand(const Expr &e) {
  out_ << '(';
  dispatch(e);
  out_ << ')';
}

// Keys of `[k1, k2] in a` are comparison-level expressions; anything that is not
// a primary is parenthesised rather than ranked by precedence.
bool SourceWriter::isPrimary(const Expr &e) {
  return !dynamic_cast<const BinaryExpr *>(&e) && !dynamic_cast<const LogicalExpr *>(&e) &&
         !dynamic_cast<const UnaryExpr *>(&e) && !dynamic_cast<const CompareExpr *>(&e) &&
         !dynamic_cast<const RegexMatch *>(&e) && !dynamic_cast<const TernaryExpr *>(&e) &&
         !dynamic_cast<const AssignExpr *>(&e) && !dynamic_cast<const IncDecExpr *>(&e) &&
         !dynamic_cast<const InExpr *>(&e);
}

void SourceWriter::literalNumber(int64_t v) { out_ << v; }

// The lexer reads `-` as an operator, and literals up to 2^64-1 wrap to int64, so a
// negative value is written as the unsigned literal that wraps back to it.
void SourceWriter::expressionNumber(int64_t v) {
  if (v < 0)
    out_ << static_cast<uint64_t>(v);
  else
    out_ << v;
}

void SourceWriter::literal(const Expr &e) {
  if (auto *n = dynamic_cast<const NumberLit *>(&e))
    literalNumber(n->value);
  else
    expr(e);
}

void SourceWriter::annotate(const Expr &e) {
  if (style_.annotateTypes && e.type != Type::Unknown)
    out_ << "/*:" << typeName(e.type) << "*/";
}

void SourceWriter::args(const std::vector<ExprPtr> &list) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (i)
      out_ << ", ";
    expr(*list[i]);
  }
}

void SourceWriter::indexList(const std::vector<ExprPtr> &list) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (i)
      out_ << ", ";
    if (list[i])
      expr(*list[i]);
    else
      out_ << '*';
  }
}

void SourceWriter::indexable(const std::unique_ptr<Symbol> &base,
                             const std::unique_ptr<HistOp> &hist) {
  if (base)
    dispatch(*base);
  else if (hist)
    dispatch(*hist);
}

void SourceWriter::targetSuffix(const std::vector<TargetComponent> &cs, int prettyDepth) {
  for (const auto &c : cs) {
    if (c.kind == TargetComponent::Kind::Member) {
      out_ << "->" << c.member;
    } else {
      out_ << '[';
      if (c.index)
        expr(*c.index);
      out_ << ']';
    }
  }
  // A separate token: glued to a member name it would lex as part of the name.
  if (prettyDepth > 0)
    out_ << (cs.empty() ? "" : " ") << std::string(static_cast<size_t>(prettyDepth), '$');
}

void SourceWriter::probePoint(const ProbePoint &p, bool withOptionality) {
  for (size_t i = 0; i < p.components.size(); ++i) {
    const auto &c = p.components[i];
    if (i)
      out_ << '.';
    out_ << c.name;
    if (c.arg) {
      out_ << '(';
      literal(*c.arg);
      out_ << ')';
    }
  }
  if (withOptionality && p.sufficient)
    out_ << '!';
  else if (withOptionality && p.optional)
    out_ << '?';
  if (p.condition) {
    out_ << " if (";
    expr(*p.condition);
    out_ << ')';
  }
}

// ------------------------------------------------------------------ visitors

void SourceWriter::visit(NumberLit &n) { expressionNumber(n.value); }

void SourceWriter::visit(StringLit &n) { out_ << quoteString(n.value); }

void SourceWriter::visit(BinaryExpr &n) {
  operand(*n.lhs);
  out_ << ' ' << binaryOpText(n.op) << ' ';
  operand(*n.rhs);
}

void SourceWriter::visit(LogicalExpr &n) {
  operand(*n.lhs);
  out_ << (n.op == LogicalOp::And ? " && " : " || ");
  operand(*n.rhs);
}

void SourceWriter::visit(UnaryExpr &n) {
  out_ << unaryOpText(n.op);
  operand(*n.operand);
}

void SourceWriter::visit(CompareExpr &n) {
  operand(*n.lhs);
  out_ << ' ' << compareOpText(n.op) << ' ';
  operand(*n.rhs);
}

void SourceWriter::visit(RegexMatch &n) {
  operand(*n.lhs);
  out_ << (n.negated ? " !~ " : " =~ ") << quoteString(n.pattern);
}

void SourceWriter::visit(TernaryExpr &n) {
  operand(*n.cond);
  out_ << " ? ";
  operand(*n.thenExpr);
  out_ << " : ";
  operand(*n.elseExpr);
}

void SourceWriter::visit(AssignExpr &n) {
  operand(*n.lhs);
  out_ << ' ' << assignOpText(n.op) << ' ';
  operand(*n.rhs);
}

void SourceWriter::visit(IncDecExpr &n) {
  const char *op = n.increment ? "++" : "--";
  if (n.prefix)
    out_ << op;
  operand(*n.operand);
  if (!n.prefix)
    out_ << op;
}

void SourceWriter::visit(Symbol &n) { out_ << n.name; }

void SourceWriter::visit(ArrayIndex &n) {
  indexable(n.base, n.hist);
  out_ << '[';
  indexList(n.indexes);
  out_ << ']';
}

void SourceWriter::visit(InExpr &n) {
  out_ << '[';
  for (size_t i = 0; i < n.keys.size(); ++i) {
    if (i)
      out_ << ", ";
    if (!n.keys[i])
      out_ << '*';
    else if (isPrimary(*n.keys[i]))
      expr(*n.keys[i]);
    else
      operand(*n.keys[i]);
  }
  out_ << "] in ";
  indexable(n.base, n.hist);
}

void SourceWriter::visit(FunctionCall &n) {
  out_ << n.name << '(';
  args(n.args);
  out_ << ')';
  annotate(n);
}

void SourceWriter::visit(PrintFormat &n) {
  out_ << printKindName(n.kind) << '(';
  bool takesFormat = n.kind == PrintKind::Printf || n.kind == PrintKind::Sprintf ||
                     n.kind == PrintKind::Printd || n.kind == PrintKind::Printdln ||
                     n.kind == PrintKind::Sprintd || n.kind == PrintKind::Sprintdln;
  if (takesFormat) {
    out_ << quoteString(n.format);
    if (!n.args.empty())
      out_ << ", ";
  }
  if (n.hist)
    dispatch(*n.hist);
  else
    args(n.args);
  out_ << ')';
}

void SourceWriter::visit(StatOp &n) {
  out_ << statFnName(n.fn) << '(';
  expr(*n.operand);
  if (n.varianceShift) {
    out_ << ", ";
    literalNumber(*n.varianceShift);
  }
  out_ << ')';
}

void SourceWriter::visit(HistOp &n) {
  out_ << (n.linear ? "@hist_linear(" : "@hist_log(");
  expr(*n.operand);
  if (n.linear) {
    for (int64_t v : {n.low, n.high, n.width}) {
      out_ << ", ";
      literalNumber(v);
    }
  }
  out_ << ')';
}

void SourceWriter::visit(TargetSymbol &n) {
  if (n.addressOf)
    out_ << '&';
  out_ << n.name;
  targetSuffix(n.components, n.prettyDepth);
  annotate(n);
}

void SourceWriter::visit(CastOp &n) {
  if (n.addressOf)
    out_ << '&';
  if (n.typeName.empty()) {
    // An autocast: suffixes written on a plain value, e.g. `f()->x`.
    out_ << '(';
    expr(*n.operand);
    out_ << ')';
  } else {
    out_ << "@cast(";
    expr(*n.operand);
    out_ << ", " << quoteString(n.typeName);
    if (!n.module.empty())
      out_ << ", " << quoteString(n.module);
    out_ << ')';
  }
  targetSuffix(n.components, n.prettyDepth);
  annotate(n);
}

void SourceWriter::visit(AtVar &n) {
  if (n.addressOf)
    out_ << '&';
  out_ << "@var(" << quoteString(n.varName);
  if (!n.module.empty())
    out_ << ", " << quoteString(n.module);
  out_ << ')';
  targetSuffix(n.components, n.prettyDepth);
  annotate(n);
}

void SourceWriter::visit(DefinedOp &n) {
  out_ << "@defined(";
  expr(*n.operand);
  out_ << ')';
}

void SourceWriter::visit(EntryOp &n) {
  out_ << "@entry(";
  expr(*n.operand);
  out_ << ')';
  annotate(n);
}

void SourceWriter::visit(ProbewriteOp &n) { out_ << "@probewrite(" << n.var->name << ')'; }

void SourceWriter::visit(SpecialAtOp &n) {
  switch (n.kind) {
  case SpecialAtOp::Kind::Perf: out_ << "@perf("; break;
  case SpecialAtOp::Kind::Enum: out_ << "@enum("; break;
  case SpecialAtOp::Kind::EnumName:
    out_ << "@enumname(";
    expr(*n.operand);
    break;
  }
  for (size_t i = 0; i < n.strings.size(); ++i) {
    if (i || n.operand)
      out_ << ", ";
    out_ << quoteString(n.strings[i]);
  }
  out_ << ')';
  annotate(n);
}

} // namespace sonde::print
