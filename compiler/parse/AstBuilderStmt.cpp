// Statements (language.md 2.3).
#include "parse/AstBuilder.h"

namespace sonde::parse {

using namespace sonde::ast;

namespace {

SortDir sortDirOf(AstBuilder::P::SortDirContext *ctx) {
  return ctx->PLUS() ? SortDir::Ascending : SortDir::Descending;
}

} // namespace

std::unique_ptr<Symbol> AstBuilder::symbol(const antlr4::Token *ident) const {
  auto s = std::make_unique<Symbol>(make<Symbol>(ident));
  s->name = s->tok.text;
  return s;
}

// '{' statement* '}'
std::unique_ptr<Block> AstBuilder::block(P::BlockContext *ctx) {
  auto b = std::make_unique<Block>(make<Block>(ctx->getStart()));
  for (size_t i = 1; i + 1 < ctx->children.size(); ++i)
    b->stmts.push_back(statement(static_cast<P::StatementContext *>(ctx->children[i])));
  return b;
}

// The first token tells the alternatives apart (cheaper than dynamic_cast).
StmtPtr AstBuilder::statement(P::StatementContext *ctx) {
  const antlr4::Token *first = ctx->getStart();
  switch (first->getType()) {
  case P::SEMI: return std::make_unique<NullStmt>(make<NullStmt>(first));
  case P::LBRACE: return block(static_cast<P::BlockStatementContext *>(ctx)->block());
  case P::IF: {
    auto *s = static_cast<P::IfStatementContext *>(ctx);
    auto n = std::make_unique<IfStmt>(make<IfStmt>(first));
    n->cond = dispatch(s->expr());
    n->thenStmt = statement(s->statement(0));
    if (s->ELSE())
      n->elseStmt = statement(s->statement(1));
    return n;
  }
  case P::WHILE: {
    auto *s = static_cast<P::WhileStatementContext *>(ctx);
    auto n = std::make_unique<WhileStmt>(make<WhileStmt>(first));
    n->cond = dispatch(s->expr());
    n->body = statement(s->statement());
    return n;
  }
  case P::FOR: {
    auto *s = static_cast<P::ForStatementContext *>(ctx);
    auto n = std::make_unique<ForStmt>(make<ForStmt>(first));
    if (s->init)
      n->init = dispatch(s->init);
    if (s->cond)
      n->cond = dispatch(s->cond);
    if (s->incr)
      n->incr = dispatch(s->incr);
    n->body = statement(s->statement());
    return n;
  }
  case P::FOREACH: return foreachStatement(static_cast<P::ForeachStatementContext *>(ctx));
  case P::TRY: {
    auto *s = static_cast<P::TryStatementContext *>(ctx);
    auto n = std::make_unique<TryStmt>(make<TryStmt>(first));
    n->tryBlock = block(s->block(0));
    if (s->IDENTIFIER())
      n->catchVar = symbol(s->IDENTIFIER()->getSymbol());
    n->catchBlock = block(s->block(1));
    return n;
  }
  default: return simpleStatement(static_cast<P::SimpleStatementContext *>(ctx->children[0]));
  }
}

StmtPtr AstBuilder::simpleStatement(P::SimpleStatementContext *ctx) {
  const antlr4::Token *first = ctx->getStart();
  switch (first->getType()) {
  case P::RETURN: {
    if (!inFunction_)
      fail("found 'return' not in function context", first, true);
    auto n = std::make_unique<ReturnStmt>(make<ReturnStmt>(first));
    if (ctx->children.size() > 1)
      n->value = dispatch(static_cast<antlr4::ParserRuleContext *>(ctx->children[1]));
    return n;
  }
  case P::DELETE: {
    auto n = std::make_unique<DeleteStmt>(make<DeleteStmt>(first));
    n->target = dispatch(static_cast<antlr4::ParserRuleContext *>(ctx->children[1]));
    return n;
  }
  case P::BREAK: return std::make_unique<BreakStmt>(make<BreakStmt>(first));
  case P::CONTINUE: return std::make_unique<ContinueStmt>(make<ContinueStmt>(first));
  case P::NEXT: return std::make_unique<NextStmt>(make<NextStmt>(first));
  default: {
    auto n = std::make_unique<ExprStmt>(make<ExprStmt>(first));
    n->expr = dispatch(static_cast<antlr4::ParserRuleContext *>(ctx->children[0]));
    return n;
  }
  }
}

StmtPtr AstBuilder::foreachStatement(P::ForeachStatementContext *ctx) {
  auto n = std::make_unique<ForeachStmt>(make<ForeachStmt>(ctx->FOREACH()->getSymbol()));
  auto setSort = [&](P::SortDirContext *dir, int column) {
    if (n->sortDir != SortDir::None)
      fail("multiple sort directives", dir->getStart(), true);
    n->sortDir = sortDirOf(dir);
    n->sortColumn = column;
  };
  P::ForeachHeadContext *head = ctx->foreachHead();
  if (head->valueVar) {
    n->value = symbol(head->valueVar);
    if (head->valueDir)
      setSort(head->valueDir, 0);
  }
  int column = 0;
  for (auto *key : head->foreachKeys()->foreachKey()) {
    n->keys.push_back(symbol(key->IDENTIFIER()->getSymbol()));
    ++column;
    if (key->sortDir())
      setSort(key->sortDir(), column);
  }
  indexable(ctx->indexable(), n->base, n->hist);
  if (ctx->slice())
    for (auto *i : ctx->slice()->indexOrStar())
      n->slice.push_back(indexOrStar(i));
  if (auto *sort = ctx->foreachSort()) {
    if (auto *w = sort->statWord())
      n->sortAggregate = statFnOf(w->getStart()->getType());
    setSort(sort->sortDir(), 0);
  }
  if (ctx->LIMIT())
    n->limit = dispatch(ctx->expr());
  n->body = statement(ctx->statement());
  return n;
}

} // namespace sonde::parse
