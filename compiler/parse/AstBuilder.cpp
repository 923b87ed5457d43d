#include "parse/AstBuilder.h"

#include "parse/Literals.h"

#include <climits>

namespace sonde::parse {

using namespace sonde::ast;

Token AstBuilder::tok(const antlr4::Token *t) const {
  return diagToken(tokens_[t->getTokenIndex()]);
}

void AstBuilder::fail(const std::string &msg, size_t tokenIndex, bool sawStyle) const {
  tokenIndex = std::min(tokenIndex, tokens_.size() - 1);
  throw BuildError{msg, diagToken(tokens_[tokenIndex]), tokenIndex, sawStyle};
}

void AstBuilder::build(P::TopLevelContext *ctx) {
  inFunction_ = false;
  if (auto *g = ctx->globalDecl()) {
    buildGlobals(g->globalItem(), false);
  } else if (auto *p = ctx->privateDecl()) {
    if (p->functionRest())
      buildFunction(p->functionRest(), true);
    else
      buildGlobals(p->globalItem(), true);
  } else if (auto *f = ctx->functionDecl()) {
    buildFunction(f->functionRest(), false);
  } else if (auto *pr = ctx->probeDecl()) {
    buildProbe(pr);
  } else {
    fail("embedded C is not supported", ctx->EMBEDDED(), true);
  }
}

// ------------------------------------------------------------ declarations

void AstBuilder::buildGlobals(const std::vector<P::GlobalItemContext *> &items, bool isPrivate) {
  std::vector<std::unique_ptr<GlobalDecl>> decls;
  for (auto *item : items) {
    auto g = std::make_unique<GlobalDecl>(make<GlobalDecl>(item->IDENTIFIER()->getSymbol()));
    g->name = g->tok.text;
    g->isPrivate = isPrivate;
    g->file = &file_;
    auto clash = [&](const GlobalDecl &other) {
      if (other.file != &file_ || other.name != g->name)
        return;
      fail(other.isPrivate == isPrivate ? "duplicate global name"
                                        : "global versus private variable declaration conflict",
           item->IDENTIFIER(), true);
    };
    for (const auto &other : script_.globals)
      clash(*other);
    for (const auto &other : decls)
      clash(*other);
    g->wrap = item->wrap != nullptr;
    if (item->size) {
      int64_t size = numberValue(item->size);
      if (size <= 0 || size > INT_MAX)
        fail("array size out of range", item->size->getStop(), true);
      g->maxEntries = size;
    }
    if (item->assign) {
      if (item->size)
        fail("only scalar globals can be initialized", item->assign, true);
      g->init = literal(item->init);
    }
    decls.push_back(std::move(g));
  }
  for (auto &g : decls) {
    script_.order.emplace_back(Script::DeclKind::Global, script_.globals.size());
    script_.globals.push_back(std::move(g));
  }
}

Type AstBuilder::typeOf(P::TypeNameContext *ctx) const {
  return ctx->LONG() ? Type::Long : Type::String;
}

void AstBuilder::buildFunction(P::FunctionRestContext *ctx, bool isPrivate) {
  auto f = std::make_unique<FunctionDecl>(make<FunctionDecl>(ctx->functionName()->getStart()));
  f->name = f->tok.text;
  f->isPrivate = isPrivate;
  f->file = &file_;
  if (ctx->typeName())
    f->declaredReturn = typeOf(ctx->typeName());
  for (auto *p : ctx->param()) {
    Param param;
    param.tok = tok(p->IDENTIFIER());
    param.name = param.tok.text;
    for (const auto &earlier : f->params)
      if (earlier.name == param.name)
        fail("duplicate parameter names", p->IDENTIFIER(), true);
    if (p->typeName())
      param.declared = typeOf(p->typeName());
    f->params.push_back(std::move(param));
  }
  if (ctx->priority) {
    int64_t priority = numberLiteral(ctx->priority, "expected literal number");
    if (priority < 1)
      fail("specified priority must be > 0", ctx->priority->getStop(), true);
    f->priority = priority;
  }
  if (ctx->EMBEDDED())
    fail("embedded C is not supported", ctx->EMBEDDED(), true);
  inFunction_ = true;
  f->body = block(ctx->block());
  inFunction_ = false;
  script_.order.emplace_back(Script::DeclKind::Function, script_.functions.size());
  script_.functions.push_back(std::move(f));
}

void AstBuilder::buildProbe(P::ProbeDeclContext *ctx) {
  std::vector<P::ProbePointsContext *> lists = ctx->probePoints();
  std::vector<P::AliasOpContext *> ops = ctx->aliasOp();
  if (ops.empty()) {
    if (ctx->epilogue) // stap ends the probe at its block and rejects the rest
      fail("expected 'probe', 'global', 'private', 'function', or '%{'", ctx->COMMA(), true);
    auto p = std::make_unique<ProbeDecl>(make<ProbeDecl>(ctx->PROBE()->getSymbol()));
    p->file = &file_;
    for (const auto &pending : expandPoints(lists[0]))
      p->points.push_back(materialize(pending));
    p->body = block(ctx->block(0));
    script_.order.emplace_back(Script::DeclKind::Probe, script_.probes.size());
    script_.probes.push_back(std::move(p));
    return;
  }
  auto a = std::make_unique<AliasDecl>(make<AliasDecl>(ctx->PROBE()->getSymbol()));
  a->file = &file_;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<PendingPoint> names = expandPoints(lists[i]);
    if (names.size() != 1)
      fail("expected probe point specifier", ops[i]->getStart(), true);
    if (names[0].optional || names[0].sufficient)
      fail("probe point alias name cannot be optional nor sufficient",
           names[0].components.front().tokenIndex, false);
    if (ops[i]->getStart()->getType() == P::ADD_ASSIGN)
      a->epilogueStyle = true;
    a->names.push_back(materialize(names[0]));
  }
  for (const auto &pending : expandPoints(lists.back()))
    a->points.push_back(materialize(pending));
  a->body = block(ctx->block(0));
  if (ctx->epilogue) {
    if (a->epilogueStyle)
      fail("Combined prologue and epilogue cannot be defined with '+='", ctx->COMMA(), true);
    a->epilogue = block(ctx->epilogue);
  }
  script_.order.emplace_back(Script::DeclKind::Alias, script_.aliases.size());
  script_.aliases.push_back(std::move(a));
}

// ------------------------------------------------------------ literals

std::string AstBuilder::stringValue(P::StringsContext *ctx) const {
  std::string value;
  for (auto *n : ctx->STRING())
    value += decodeString(n->getText());
  return value;
}

std::unique_ptr<StringLit> AstBuilder::strings(P::StringsContext *ctx) const {
  auto lit = std::make_unique<StringLit>(make<StringLit>(ctx->getStart()));
  lit->value = stringValue(ctx);
  return lit;
}

std::unique_ptr<NumberLit> AstBuilder::number(antlr4::tree::TerminalNode *n) const {
  std::optional<int64_t> v = parseNumber(n->getText());
  if (!v)
    fail("number invalid or out of range", n, true);
  auto lit = std::make_unique<NumberLit>(make<NumberLit>(n->getSymbol()));
  lit->value = *v;
  return lit;
}

ExprPtr AstBuilder::literal(P::LiteralContext *ctx) const {
  if (ctx->strings())
    return strings(ctx->strings());
  std::optional<int64_t> v = parseNumber(ctx->NUMBER()->getText(), ctx->MINUS() != nullptr);
  if (!v)
    fail("number invalid or out of range", ctx->NUMBER(), true);
  auto lit = std::make_unique<NumberLit>(make<NumberLit>(ctx->NUMBER()->getSymbol()));
  lit->value = *v;
  return lit;
}

int64_t AstBuilder::numberValue(P::NumberContext *ctx) const {
  std::optional<int64_t> v = parseNumber(ctx->NUMBER()->getText(), ctx->MINUS() != nullptr);
  if (!v)
    fail("number invalid or out of range", ctx->NUMBER(), true);
  return *v;
}

int64_t AstBuilder::numberLiteral(P::LiteralContext *ctx, const char *notNumber) const {
  if (ctx->strings())
    fail(notNumber, ctx->getStart(), true);
  return static_cast<NumberLit &>(*literal(ctx)).value;
}

} // namespace sonde::parse
