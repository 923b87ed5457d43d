// Parse tree -> AST, one top-level declaration at a time. Checks that stap makes
// while parsing but that a grammar cannot express (literal ranges, duplicate
// parameters, suffix rules of probe points, print argument rules, printf formats)
// are done here and reported as parse errors through BuildError.
#pragma once

#include "ast/Ast.h"
#include "diag/Diagnostics.h"
#include "parse/Lexer.h"

#include "SondeParser.h"

#include <string>
#include <vector>

namespace sonde::parse {

// A parse error found while building; the declaration is dropped and parsing
// resumes after `tokenIndex` like after a syntax error.
struct BuildError {
  std::string message;
  Token tok;
  size_t tokenIndex;
  bool sawStyle;
};

class AstBuilder {
public:
  using P = sonde_antlr::SondeParser;

  AstBuilder(const SourceFile &file, const std::vector<LexToken> &tokens, ast::Script &script,
             DiagnosticEngine &diags)
      : file_(file), tokens_(tokens), script_(script), diags_(diags) {}

  // Appends the declaration to the script, or throws BuildError.
  void build(P::TopLevelContext *ctx);

private:
  // ---- tokens and errors (AstBuilder.cpp)
  Token tok(const antlr4::Token *t) const;
  Token tok(antlr4::tree::TerminalNode *n) const { return tok(n->getSymbol()); }
  template <class N> N make(const antlr4::Token *t) const {
    N n;
    n.tok = tok(t);
    return n;
  }
  // Throws BuildError. `sawStyle` follows stap: errors about the token the parser
  // was looking at say "saw:", errors that name a specific earlier token "at:".
  [[noreturn]] void fail(const std::string &msg, size_t tokenIndex, bool sawStyle) const;
  [[noreturn]] void fail(const std::string &msg, const antlr4::Token *t, bool sawStyle) const {
    fail(msg, t->getTokenIndex(), sawStyle);
  }
  [[noreturn]] void fail(const std::string &msg, antlr4::tree::TerminalNode *n,
                         bool sawStyle) const {
    fail(msg, n->getSymbol(), sawStyle);
  }
  // The index of the token after `ctx` (what stap had peeked at that point).
  static size_t after(antlr4::ParserRuleContext *ctx) {
    return ctx->getStop()->getTokenIndex() + 1;
  }

  // ---- declarations (AstBuilder.cpp)
  void buildGlobals(const std::vector<P::GlobalItemContext *> &items, bool isPrivate);
  void buildFunction(P::FunctionRestContext *ctx, bool isPrivate);
  void buildProbe(P::ProbeDeclContext *ctx);
  ast::Type typeOf(P::TypeNameContext *ctx) const;

  // ---- literals (AstBuilder.cpp)
  ast::ExprPtr literal(P::LiteralContext *ctx) const;
  // A number literal; `notNumber` is the error for a string.
  int64_t numberLiteral(P::LiteralContext *ctx, const char *notNumber) const;
  int64_t numberValue(P::NumberContext *ctx) const;
  std::unique_ptr<ast::StringLit> strings(P::StringsContext *ctx) const;
  std::unique_ptr<ast::NumberLit> number(antlr4::tree::TerminalNode *n) const;

  // ---- probe points (AstBuilderProbePoints.cpp)
  struct PendingComponent {
    Token tok;
    size_t tokenIndex = 0;
    std::string name;
    P::LiteralContext *arg = nullptr;
  };
  struct PendingPoint {
    std::vector<PendingComponent> components;
    bool optional = false, sufficient = false;
    P::ExprContext *condition = nullptr;
  };
  std::vector<PendingPoint> expandPoints(P::ProbePointsContext *ctx);
  std::vector<PendingPoint> expandPoint(P::ProbePointContext *ctx);
  std::unique_ptr<ast::ProbePoint> materialize(const PendingPoint &p);

  // ---- statements (AstBuilderStmt.cpp)
  std::unique_ptr<ast::Block> block(P::BlockContext *ctx);
  ast::StmtPtr statement(P::StatementContext *ctx);
  ast::StmtPtr simpleStatement(P::SimpleStatementContext *ctx);
  ast::StmtPtr foreachStatement(P::ForeachStatementContext *ctx);
  std::unique_ptr<ast::Symbol> symbol(const antlr4::Token *ident) const;

  // ---- expressions (AstBuilderExpr.cpp)
  ast::ExprPtr expr(P::ExprContext *ctx);
  ast::ExprPtr ternary(P::TernaryContext *ctx);
  ast::ExprPtr logical(antlr4::ParserRuleContext *ctx);
  ast::ExprPtr binary(antlr4::ParserRuleContext *ctx);
  ast::ExprPtr arrayIn(P::ArrayInContext *ctx);
  ast::ExprPtr comparison(P::ComparisonContext *ctx);
  ast::ExprPtr binaryOrCompare(P::ComparisonContext *ctx);
  ast::ExprPtr unary(P::UnaryContext *ctx);
  ast::ExprPtr crement(P::CrementContext *ctx);
  ast::ExprPtr dispatch(antlr4::ParserRuleContext *ctx);
  void indexable(P::IndexableContext *ctx, std::unique_ptr<ast::Symbol> &base,
                 std::unique_ptr<ast::HistOp> &hist);
  ast::ExprPtr indexOrStar(P::IndexOrStarContext *ctx);

  // ---- values (AstBuilderValue.cpp)
  ast::ExprPtr dwarfValue(P::DwarfValueContext *ctx);
  ast::ExprPtr dwarfBase(P::DwarfBaseContext *ctx);
  ast::ExprPtr value(P::ValueContext *ctx);
  ast::ExprPtr atOperator(P::ValueContext *ctx);
  ast::ExprPtr printCall(P::PrintCallContext *ctx);
  std::unique_ptr<ast::HistOp> histOp(P::HistOpContext *ctx);
  ast::ExprPtr statOp(P::StatValueContext *ctx);
  // Target suffixes (->m, [i], $) onto a target-ish node's fields.
  void addTargetSuffixes(const std::vector<P::TargetSuffixContext *> &suffixes,
                         std::vector<ast::TargetComponent> &components, int &prettyDepth);
  static ast::StatFn statFnOf(size_t tokenType);
  // The string of a STRING+ sequence (adjacent literals concatenated).
  std::string stringValue(P::StringsContext *ctx) const;

  const SourceFile &file_;
  const std::vector<LexToken> &tokens_;
  ast::Script &script_;
  DiagnosticEngine &diags_; // warnings only; errors are thrown
  bool inFunction_ = false;
};

} // namespace sonde::parse
