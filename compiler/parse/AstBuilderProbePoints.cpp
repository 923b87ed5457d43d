// Probe points: glued component names, brace alternation (cartesian product) and
// the rules on where `?`, `!` and `if (...)` may appear (stap's parse_components).
#include "parse/AstBuilder.h"

namespace sonde::parse {

using namespace sonde::ast;

std::vector<AstBuilder::PendingPoint> AstBuilder::expandPoints(P::ProbePointsContext *ctx) {
  std::vector<PendingPoint> all;
  for (auto *pp : ctx->probePoint())
    for (auto &p : expandPoint(pp))
      all.push_back(std::move(p));
  return all;
}

std::vector<AstBuilder::PendingPoint> AstBuilder::expandPoint(P::ProbePointContext *ctx) {
  std::vector<PendingPoint> points;
  for (auto *comp : ctx->ppComponent()) {
    std::vector<PendingPoint> suffix;
    if (comp->probePoints()) {
      suffix = expandPoints(comp->probePoints());
    } else {
      PendingComponent c;
      const antlr4::Token *first = comp->ppPiece().front()->getStart();
      c.tok = tok(first);
      c.tokenIndex = first->getTokenIndex();
      for (auto *piece : comp->ppPiece())
        c.name += piece->getText();
      c.tok.text = c.name;
      c.arg = comp->literal();
      suffix.emplace_back();
      suffix.back().components.push_back(std::move(c));
    }
    if (points.empty()) {
      points = std::move(suffix);
      continue;
    }
    std::vector<PendingPoint> product;
    for (const auto &p : points) {
      if (p.optional || p.sufficient || p.condition)
        fail("'?', '!' or condition must only be specified in suffix",
             p.components.front().tokenIndex, false);
      for (const auto &s : suffix) {
        PendingPoint joined = p;
        joined.components.insert(joined.components.end(), s.components.begin(), s.components.end());
        joined.optional = s.optional;
        joined.sufficient = s.sufficient;
        joined.condition = s.condition;
        product.push_back(std::move(joined));
      }
    }
    points = std::move(product);
  }
  if (ctx->optional || ctx->sufficient) {
    const antlr4::Token *mark = ctx->optional ? ctx->optional : ctx->sufficient;
    for (auto &p : points) {
      if (p.optional || p.sufficient)
        fail("'?' or '!' respecified", mark, true);
      p.optional = true;
      p.sufficient = ctx->sufficient != nullptr; // sufficient implies optional
    }
  }
  if (ctx->IF()) {
    for (auto &p : points) {
      if (p.condition)
        fail("condition respecified", ctx->RPAREN(), true);
      p.condition = ctx->expr();
    }
  }
  return points;
}

std::unique_ptr<ProbePoint> AstBuilder::materialize(const PendingPoint &p) {
  auto pp = std::make_unique<ProbePoint>();
  pp->tok = p.components.front().tok;
  for (const auto &c : p.components) {
    ProbePointComponent comp;
    comp.tok = c.tok;
    comp.name = c.name;
    if (c.arg)
      comp.arg = literal(c.arg);
    pp->components.push_back(std::move(comp));
  }
  pp->optional = p.optional;
  pp->sufficient = p.sufficient;
  // Each expanded point gets its own copy of a shared condition.
  if (p.condition)
    pp->condition = expr(p.condition);
  return pp;
}

} // namespace sonde::parse
