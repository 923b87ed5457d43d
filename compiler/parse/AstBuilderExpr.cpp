// Operator expressions, one precedence level per grammar rule (language.md 2.4).
#include "parse/AstBuilder.h"

namespace sonde::parse {

using namespace sonde::ast;

namespace {

// Operators are terminal children (see the grammar), operands rule contexts.
const antlr4::Token *opToken(antlr4::tree::ParseTree *node) {
  return static_cast<antlr4::tree::TerminalNode *>(node)->getSymbol();
}

antlr4::ParserRuleContext *child(antlr4::ParserRuleContext *ctx, size_t i) {
  return static_cast<antlr4::ParserRuleContext *>(ctx->children[i]);
}

// Levels that are a plain wrapper around their one operand when no operator of
// theirs is present.
bool isPassThrough(size_t rule) {
  using P = AstBuilder::P;
  switch (rule) {
  case P::RuleExpr:
  case P::RuleTernary:
  case P::RuleLogicalOr:
  case P::RuleLogicalAnd:
  case P::RuleBitOr:
  case P::RuleBitXor:
  case P::RuleBitAnd:
  case P::RuleArrayIn:
  case P::RuleComparison:
  case P::RuleShift:
  case P::RuleConcatenation:
  case P::RuleAdditive:
  case P::RuleMultiplicative:
  case P::RuleUnary:
  case P::RuleCrement:
  case P::RuleDwarfValue: return true;
  default: return false;
  }
}

AssignOp assignOpOf(size_t type) {
  using P = AstBuilder::P;
  switch (type) {
  case P::ADD_ASSIGN: return AssignOp::AddAssign;
  case P::SUB_ASSIGN: return AssignOp::SubAssign;
  case P::MUL_ASSIGN: return AssignOp::MulAssign;
  case P::DIV_ASSIGN: return AssignOp::DivAssign;
  case P::MOD_ASSIGN: return AssignOp::ModAssign;
  case P::SHL_ASSIGN: return AssignOp::ShlAssign;
  case P::SHR_ASSIGN: return AssignOp::ShrAssign;
  case P::AND_ASSIGN: return AssignOp::AndAssign;
  case P::XOR_ASSIGN: return AssignOp::XorAssign;
  case P::OR_ASSIGN: return AssignOp::OrAssign;
  case P::CAT_ASSIGN: return AssignOp::ConcatAssign;
  case P::LSHIFT_ACC: return AssignOp::Accumulate;
  default: return AssignOp::Assign;
  }
}

std::optional<BinaryOp> binaryOpOf(size_t type) {
  using P = AstBuilder::P;
  switch (type) {
  case P::PLUS: return BinaryOp::Add;
  case P::MINUS: return BinaryOp::Sub;
  case P::STAR: return BinaryOp::Mul;
  case P::SLASH: return BinaryOp::Div;
  case P::PERCENT: return BinaryOp::Mod;
  case P::SHL: return BinaryOp::Shl;
  case P::SHR: return BinaryOp::Shr;
  case P::RSHIFT_L: return BinaryOp::LShr;
  case P::AMP: return BinaryOp::BitAnd;
  case P::PIPE: return BinaryOp::BitOr;
  case P::CARET: return BinaryOp::BitXor;
  case P::DOT: return BinaryOp::Concat;
  default: return std::nullopt;
  }
}

std::optional<CompareOp> compareOpOf(size_t type) {
  using P = AstBuilder::P;
  switch (type) {
  case P::LT: return CompareOp::Lt;
  case P::GT: return CompareOp::Gt;
  case P::LE: return CompareOp::Le;
  case P::GE: return CompareOp::Ge;
  case P::EQ: return CompareOp::Eq;
  case P::NE: return CompareOp::Ne;
  default: return std::nullopt;
  }
}

} // namespace

// Every expression level goes through here. A typical operand is wrapped in
// some fifteen single-child contexts; they are skipped without building
// anything, which keeps the builder fast.
ExprPtr AstBuilder::dispatch(antlr4::ParserRuleContext *ctx) {
  while (ctx->children.size() == 1 && isPassThrough(ctx->getRuleIndex()))
    ctx = child(ctx, 0);
  switch (ctx->getRuleIndex()) {
  case P::RuleExpr: return expr(static_cast<P::ExprContext *>(ctx));
  case P::RuleTernary: return ternary(static_cast<P::TernaryContext *>(ctx));
  case P::RuleArrayIn: return arrayIn(static_cast<P::ArrayInContext *>(ctx));
  case P::RuleComparison: return comparison(static_cast<P::ComparisonContext *>(ctx));
  case P::RuleUnary: return unary(static_cast<P::UnaryContext *>(ctx));
  case P::RuleCrement: return crement(static_cast<P::CrementContext *>(ctx));
  case P::RuleDwarfValue: return dwarfValue(static_cast<P::DwarfValueContext *>(ctx));
  case P::RuleDwarfBase: return dwarfBase(static_cast<P::DwarfBaseContext *>(ctx));
  default: return binary(ctx); // the left-associative levels
  }
}

// ternary (assignOp expr)?
ExprPtr AstBuilder::expr(P::ExprContext *ctx) {
  if (ctx->children.size() == 1)
    return dispatch(ctx);
  const antlr4::Token *op = child(ctx, 1)->getStart();
  auto n = std::make_unique<AssignExpr>(make<AssignExpr>(op));
  n->op = assignOpOf(op->getType());
  n->lhs = dispatch(child(ctx, 0));
  n->rhs = dispatch(child(ctx, 2));
  return n;
}

// logicalOr ('?' expr ':' ternary)?
ExprPtr AstBuilder::ternary(P::TernaryContext *ctx) {
  if (ctx->children.size() == 1)
    return dispatch(ctx);
  auto n = std::make_unique<TernaryExpr>(make<TernaryExpr>(opToken(ctx->children[1])));
  n->cond = dispatch(child(ctx, 0));
  n->thenExpr = dispatch(child(ctx, 2));
  n->elseExpr = dispatch(child(ctx, 4));
  return n;
}

// `operand (op operand)*`, left associative: || && | ^ & << >> >>> . + - * / %.
ExprPtr AstBuilder::binary(antlr4::ParserRuleContext *ctx) {
  auto &ch = ctx->children;
  ExprPtr lhs = dispatch(child(ctx, 0));
  for (size_t i = 1; i + 1 < ch.size(); i += 2) {
    const antlr4::Token *op = opToken(ch[i]);
    ExprPtr rhs = dispatch(child(ctx, i + 1));
    if (op->getType() == P::OROR || op->getType() == P::ANDAND) {
      auto n = std::make_unique<LogicalExpr>(make<LogicalExpr>(op));
      n->op = op->getType() == P::OROR ? LogicalOp::Or : LogicalOp::And;
      n->lhs = std::move(lhs);
      n->rhs = std::move(rhs);
      lhs = std::move(n);
    } else {
      auto n = std::make_unique<BinaryExpr>(make<BinaryExpr>(op));
      n->op = *binaryOpOf(op->getType());
      n->lhs = std::move(lhs);
      n->rhs = std::move(rhs);
      lhs = std::move(n);
    }
  }
  return lhs;
}

void AstBuilder::indexable(P::IndexableContext *ctx, std::unique_ptr<Symbol> &base,
                           std::unique_ptr<HistOp> &hist) {
  if (ctx->histOp())
    hist = histOp(ctx->histOp());
  else
    base = symbol(ctx->IDENTIFIER()->getSymbol());
}

ExprPtr AstBuilder::indexOrStar(P::IndexOrStarContext *ctx) {
  // No expression starts with '*'.
  if (ctx->getStart()->getType() == P::STAR)
    return nullptr;
  return dispatch(child(ctx, 0));
}

ExprPtr AstBuilder::arrayIn(P::ArrayInContext *ctx) {
  std::vector<ExprPtr> keys;
  if (!ctx->LBRACKET()) {
    ExprPtr e = dispatch(ctx->comparison());
    if (!ctx->IN())
      return e;
    keys.push_back(std::move(e));
  } else {
    for (auto *k : ctx->inKey())
      keys.push_back(k->STAR() ? nullptr : dispatch(k->comparison()));
    if (!ctx->IN()) {
      // `[e]` alone is just e; a list needs `in`.
      if (keys.size() != 1 || !keys[0])
        fail("unexpected comma-separated expression list", after(ctx), true);
      return std::move(keys[0]);
    }
  }
  auto n = std::make_unique<InExpr>(make<InExpr>(ctx->IN()->getSymbol()));
  n->keys = std::move(keys);
  indexable(ctx->indexable(), n->base, n->hist);
  return n;
}

ExprPtr AstBuilder::comparison(P::ComparisonContext *ctx) {
  if (!ctx->regexOp)
    return binaryOrCompare(ctx);
  auto n = std::make_unique<RegexMatch>(make<RegexMatch>(ctx->regexOp));
  n->negated = ctx->regexOp->getType() == P::NOMATCH;
  n->lhs = dispatch(child(ctx, 0));
  n->pattern = stringValue(ctx->strings());
  return n;
}

// `shift (cmp shift)*`: comparisons chain left to right like stap's.
ExprPtr AstBuilder::binaryOrCompare(P::ComparisonContext *ctx) {
  auto &ch = ctx->children;
  ExprPtr lhs = dispatch(child(ctx, 0));
  for (size_t i = 1; i + 1 < ch.size(); i += 2) {
    const antlr4::Token *op = opToken(ch[i]);
    auto n = std::make_unique<CompareExpr>(make<CompareExpr>(op));
    n->op = *compareOpOf(op->getType());
    n->lhs = std::move(lhs);
    n->rhs = dispatch(child(ctx, i + 1));
    lhs = std::move(n);
  }
  return lhs;
}

ExprPtr AstBuilder::unary(P::UnaryContext *ctx) {
  if (!ctx->op)
    return dispatch(child(ctx, 0));
  auto n = std::make_unique<UnaryExpr>(make<UnaryExpr>(ctx->op));
  switch (ctx->op->getType()) {
  case P::PLUS: n->op = UnaryOp::Plus; break;
  case P::MINUS: n->op = UnaryOp::Neg; break;
  case P::BANG: n->op = UnaryOp::Not; break;
  default: n->op = UnaryOp::BitNot; break;
  }
  n->operand = dispatch(child(ctx, 1));
  return n;
}

ExprPtr AstBuilder::crement(P::CrementContext *ctx) {
  const antlr4::Token *op = ctx->op ? ctx->op : ctx->postOp;
  ExprPtr operand = dispatch(child(ctx, ctx->op ? 1 : 0));
  if (!op)
    return operand;
  auto n = std::make_unique<IncDecExpr>(make<IncDecExpr>(op));
  n->prefix = ctx->op != nullptr;
  n->increment = op->getType() == P::INC;
  n->operand = std::move(operand);
  return n;
}

} // namespace sonde::parse
