// Internal to sema: the type inference pass object shared by
// TypeInference.cpp (the fixed-point driver, unification and diagnostics) and
// TypeRules.cpp (the constraint each construct imposes, language.md §3).
#pragma once

#include "ast/Ast.h"
#include "sema/SemaDiagnostics.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sonde::sema::types {

using ast::Type;
constexpr Type U = Type::Unknown;
constexpr Type L = Type::Long;
constexpr Type S = Type::String;
constexpr Type ST = Type::Stats;

// A declaration's type cell: a global's value or index type, a local's or
// parameter's type, or a function's return type.
struct Slot {
  Type *type = nullptr;
  const void *decl = nullptr;
  int index = -1;                    // array index position, -1 for the declaration's own type
  ast::GlobalDecl *global = nullptr; // set for a global's value type
};

struct SlotKey {
  const void *decl;
  int index;
  bool operator==(const SlotKey &o) const { return decl == o.decl && index == o.index; }
};
struct SlotKeyHash {
  size_t operator()(const SlotKey &k) const {
    return std::hash<const void *>()(k.decl) * 31 + static_cast<size_t>(k.index + 1);
  }
};

// Each visit() applies one construct's constraints with t_ as the type the
// enclosing construct expects (stap's typeresolution_info).
class TypeInferencePass : public ast::Visitor {
public:
  using ast::Visitor::visit;
  TypeInferencePass(ast::Script &script, SemaDiagnostics &diags);
  void run();

  // Statements.
  void visit(ast::Block &b) override;
  void visit(ast::NullStmt &) override {}
  void visit(ast::ExprStmt &s) override;
  void visit(ast::IfStmt &s) override;
  void visit(ast::WhileStmt &s) override;
  void visit(ast::ForStmt &s) override;
  void visit(ast::ForeachStmt &s) override;
  void visit(ast::TryStmt &s) override;
  void visit(ast::ReturnStmt &s) override;
  void visit(ast::DeleteStmt &s) override;
  void visit(ast::BreakStmt &) override {}
  void visit(ast::ContinueStmt &) override {}
  void visit(ast::NextStmt &) override {}

  // Expressions.
  void visit(ast::NumberLit &e) override;
  void visit(ast::StringLit &e) override;
  void visit(ast::BinaryExpr &e) override;
  void visit(ast::LogicalExpr &e) override;
  void visit(ast::UnaryExpr &e) override;
  void visit(ast::IncDecExpr &e) override;
  void visit(ast::CompareExpr &e) override;
  void visit(ast::RegexMatch &e) override;
  void visit(ast::TernaryExpr &e) override;
  void visit(ast::AssignExpr &e) override;
  void visit(ast::Symbol &e) override;
  void visit(ast::ArrayIndex &e) override;
  void visit(ast::InExpr &e) override;
  void visit(ast::FunctionCall &e) override;
  void visit(ast::PrintFormat &e) override;
  void visit(ast::StatOp &e) override;
  void visit(ast::HistOp &e) override;
  void visit(ast::TargetSymbol &e) override;
  void visit(ast::CastOp &e) override;
  void visit(ast::AtVar &e) override;
  void visit(ast::EntryOp &e) override;
  void visit(ast::ProbewriteOp &e) override;
  void visit(ast::DefinedOp &e) override;
  void visit(ast::SpecialAtOp &e) override;

private:
  void pass();
  void visitBody(const void *body, const std::function<void()> &visit);
  void expr(ast::Expr &e, Type expected) {
    t_ = expected;
    e.accept(*this);
    if (e.type == U)
      ++unknownLeft_;
  }
  void stmt(const ast::StmtPtr &s) {
    if (s) {
      t_ = U;
      s->accept(*this);
    }
  }

  // Constraint helpers.
  void literal(ast::Expr &e, Type own);
  void fixed(ast::Expr &e, Type own);
  void numeric(ast::Expr &e, ast::Expr &lhs, ast::Expr &rhs);
  void concatenation(ast::Expr &e, ast::Expr &lhs, ast::Expr &rhs);
  void unary(ast::Expr &e, ast::Expr &operand);
  void setType(ast::Expr &e, Type t) {
    e.type = t;
    resolved(e.tok, t, nullptr);
  }
  void checkArg(Type wanted, ast::Expr &arg);
  void resolveBoth(ast::Expr &referrer, Slot slot, Type t, bool acceptUnknown = false);
  void resolveIndex(ast::Expr *index, ast::GlobalDecl &g, size_t i);
  void resolveParam(ast::Expr &arg, ast::FunctionDecl &f, size_t i);
  void checkLocal(ast::LocalVar &l);

  Slot valueSlot(ast::GlobalDecl &g) { return {&g.type, &g, -1, &g}; }
  Slot valueSlot(ast::LocalVar &l) { return {&l.type, &l, -1}; }
  Slot returnSlot(ast::FunctionDecl &f) { return {&f.returnType, &f, -1}; }
  Slot indexSlot(ast::GlobalDecl &g, size_t i) {
    return {&g.indexTypes[i], &g, static_cast<int>(i)};
  }

  // Diagnostics. The last pass collects them; like stap, only the most
  // specific kind of type mismatch found is shown (a declaration's, then an
  // expected type's, then two operands'), and unresolved types only when
  // nothing mismatched, since mismatches leave types unresolved.
  static constexpr int kAlways = -1, kUnresolved = 0, kSides = 1, kExpected = 2, kDecl = 3;
  void report(int kind, Diagnostic d) {
    if (final_)
      reports_.emplace_back(kind, std::move(d));
  }
  void flushReports();
  void resolved(const Token &tok, Type t, const Slot *slot);
  void unresolved(const Token &tok);
  void invalid(const Token &tok, Type t);
  void mismatch(const Token &tok, Type expected, Type found);
  void mismatchSides(const ast::Expr &e, Type l, Type r);
  void mismatchDecl(const Token &tok, Type t, const Slot &slot);

  ast::Script &script_;
  SemaDiagnostics &diags_;
  Type t_ = U; // the type the enclosing construct expects of the current node
  bool final_ = false;
  bool firstPass_ = true;
  size_t newlyResolved_ = 0, stillUnresolved_ = 0;
  size_t unknownLeft_ = 0; // expressions visited that are still untyped
  std::unordered_set<const void *> complete_;
  ast::FunctionDecl *fn_ = nullptr;
  std::unordered_map<SlotKey, Token, SlotKeyHash> firstInferred_;
  std::unordered_map<const ast::LocalVar *, int> paramIndex_;
  std::vector<std::pair<int, Diagnostic>> reports_;
};

} // namespace sonde::sema::types
