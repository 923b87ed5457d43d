#include "ast/Ast.h"

namespace sonde::ast {

void NumberLit::accept(Visitor &v) { v.visit(*this); }
void StringLit::accept(Visitor &v) { v.visit(*this); }
void BinaryExpr::accept(Visitor &v) { v.visit(*this); }
void LogicalExpr::accept(Visitor &v) { v.visit(*this); }
void UnaryExpr::accept(Visitor &v) { v.visit(*this); }
void CompareExpr::accept(Visitor &v) { v.visit(*this); }
void RegexMatch::accept(Visitor &v) { v.visit(*this); }
void TernaryExpr::accept(Visitor &v) { v.visit(*this); }
void AssignExpr::accept(Visitor &v) { v.visit(*this); }
void IncDecExpr::accept(Visitor &v) { v.visit(*this); }
void Symbol::accept(Visitor &v) { v.visit(*this); }
void ArrayIndex::accept(Visitor &v) { v.visit(*this); }
void InExpr::accept(Visitor &v) { v.visit(*this); }
void FunctionCall::accept(Visitor &v) { v.visit(*this); }
void PrintFormat::accept(Visitor &v) { v.visit(*this); }
void StatOp::accept(Visitor &v) { v.visit(*this); }
void HistOp::accept(Visitor &v) { v.visit(*this); }
void TargetSymbol::accept(Visitor &v) { v.visit(*this); }
void CastOp::accept(Visitor &v) { v.visit(*this); }
void AtVar::accept(Visitor &v) { v.visit(*this); }
void DefinedOp::accept(Visitor &v) { v.visit(*this); }
void EntryOp::accept(Visitor &v) { v.visit(*this); }
void ProbewriteOp::accept(Visitor &v) { v.visit(*this); }
void SpecialAtOp::accept(Visitor &v) { v.visit(*this); }
void Block::accept(Visitor &v) { v.visit(*this); }
void NullStmt::accept(Visitor &v) { v.visit(*this); }
void ExprStmt::accept(Visitor &v) { v.visit(*this); }
void IfStmt::accept(Visitor &v) { v.visit(*this); }
void WhileStmt::accept(Visitor &v) { v.visit(*this); }
void ForStmt::accept(Visitor &v) { v.visit(*this); }
void ForeachStmt::accept(Visitor &v) { v.visit(*this); }
void TryStmt::accept(Visitor &v) { v.visit(*this); }
void ReturnStmt::accept(Visitor &v) { v.visit(*this); }
void DeleteStmt::accept(Visitor &v) { v.visit(*this); }
void BreakStmt::accept(Visitor &v) { v.visit(*this); }
void ContinueStmt::accept(Visitor &v) { v.visit(*this); }
void NextStmt::accept(Visitor &v) { v.visit(*this); }
void GlobalDecl::accept(Visitor &v) { v.visit(*this); }
void FunctionDecl::accept(Visitor &v) { v.visit(*this); }
void ProbeDecl::accept(Visitor &v) { v.visit(*this); }
void AliasDecl::accept(Visitor &v) { v.visit(*this); }

} // namespace sonde::ast
