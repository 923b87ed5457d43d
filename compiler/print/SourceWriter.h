// Writes AST expressions, statements and probe points back as Sonde source that
// parses again to the same AST. Shared by the -p1 and -p2 printers.
//
// Style follows `stap -p1`: every operand of an operator is parenthesised, so the
// text shows exactly how the parser grouped it. Unlike stap, the output is always
// valid input: strings are re-escaped, pretty-print suffixes are spelled `$`/`$$`,
// and numbers are written so that they read back to the same value.
#pragma once

#include "ast/Ast.h"

#include <cstdint>
#include <iosfwd>

namespace sonde::print {

struct SourceStyle {
  // Append `/*:type*/` after calls and context expressions whose inferred type is
  // known (for -p2 -v, where the types are the point of the listing).
  bool annotateTypes = false;
};

class SourceWriter : private ast::Visitor {
public:
  explicit SourceWriter(std::ostream &out, SourceStyle style = {}) : out_(out), style_(style) {}

  // An expression where any expression is accepted (statement, argument, index).
  void expr(const ast::Expr &e);
  // A statement, continuing the current line; nested lines are indented one level
  // deeper than the current one. Ends without a newline.
  void stmt(const ast::Stmt &s);
  // `{ ... }` continuing the current line.
  void block(const ast::Block &b);
  // A probe point with its `if (cond)` suffix and, unless told otherwise, its `?`/`!`.
  void probePoint(const ast::ProbePoint &p, bool withOptionality = true);
  // A number where the grammar takes a literal: `-N` is folded there, so negative
  // values are written with their sign.
  void literalNumber(int64_t v);
  // A global initializer or probe-point argument (a NumberLit or StringLit).
  void literal(const ast::Expr &e);

  // Starts a new line at the current indentation.
  void newline();
  void indent() { ++depth_; }
  void dedent() { --depth_; }

private:
  // Visitors take non-const nodes; printing never modifies them.
  void dispatch(const ast::Node &n) { const_cast<ast::Node &>(n).accept(*this); }
  // An operand of an operator: always parenthesised, like stap -p1.
  void operand(const ast::Expr &e);
  static bool isPrimary(const ast::Expr &e);
  // A number in expression position, where `-` would be a separate unary operator.
  void expressionNumber(int64_t v);
  void annotate(const ast::Expr &e);
  void args(const std::vector<ast::ExprPtr> &list);
  void indexList(const std::vector<ast::ExprPtr> &list); // null entries are `*`
  void indexable(const std::unique_ptr<ast::Symbol> &base,
                 const std::unique_ptr<ast::HistOp> &hist);
  void targetSuffix(const std::vector<ast::TargetComponent> &cs, int prettyDepth);
  // A statement nested under a header (`if (c)`, `while (c)`, ...).
  void body(const ast::Stmt &s);
  void foreachHead(const ast::ForeachStmt &n);

  // Expressions.
  void visit(ast::NumberLit &n) override;
  void visit(ast::StringLit &n) override;
  void visit(ast::BinaryExpr &n) override;
  void visit(ast::LogicalExpr &n) override;
  void visit(ast::UnaryExpr &n) override;
  void visit(ast::CompareExpr &n) override;
  void visit(ast::RegexMatch &n) override;
  void visit(ast::TernaryExpr &n) override;
  void visit(ast::AssignExpr &n) override;
  void visit(ast::IncDecExpr &n) override;
  void visit(ast::Symbol &n) override;
  void visit(ast::ArrayIndex &n) override;
  void visit(ast::InExpr &n) override;
  void visit(ast::FunctionCall &n) override;
  void visit(ast::PrintFormat &n) override;
  void visit(ast::StatOp &n) override;
  void visit(ast::HistOp &n) override;
  void visit(ast::TargetSymbol &n) override;
  void visit(ast::CastOp &n) override;
  void visit(ast::AtVar &n) override;
  void visit(ast::DefinedOp &n) override;
  void visit(ast::EntryOp &n) override;
  void visit(ast::ProbewriteOp &n) override;
  void visit(ast::SpecialAtOp &n) override;

  // Statements.
  void visit(ast::Block &n) override;
  void visit(ast::NullStmt &n) override;
  void visit(ast::ExprStmt &n) override;
  void visit(ast::IfStmt &n) override;
  void visit(ast::WhileStmt &n) override;
  void visit(ast::ForStmt &n) override;
  void visit(ast::ForeachStmt &n) override;
  void visit(ast::TryStmt &n) override;
  void visit(ast::ReturnStmt &n) override;
  void visit(ast::DeleteStmt &n) override;
  void visit(ast::BreakStmt &n) override;
  void visit(ast::ContinueStmt &n) override;
  void visit(ast::NextStmt &n) override;

  std::ostream &out_;
  SourceStyle style_;
  int depth_ = 0;
};

} // namespace sonde::print
