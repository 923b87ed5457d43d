// Deep copies of AST subtrees. Sema gives every derived probe its own copy of
// the alias and user bodies, so each copy gets its own locals and types.
#pragma once

#include "ast/Ast.h"

#include <functional>

namespace sonde::ast {

struct CloneOptions {
  // When set, each @probewrite(v) is replaced by whatever this returns (alias
  // expansion turns it into the literal 1 or 0).
  std::function<ExprPtr(const ProbewriteOp &)> replaceProbewrite;
};

// Copies keep tokens, literal values and any types already set; sema links
// (Symbol::global/local, FunctionCall::callees) are copied as they are, so clone
// before resolving names.
ExprPtr cloneExpr(const Expr &e, const CloneOptions &opts = {});
StmtPtr cloneStmt(const Stmt &s, const CloneOptions &opts = {});
std::unique_ptr<Block> cloneBlock(const Block &b, const CloneOptions &opts = {});
std::unique_ptr<ProbePoint> cloneProbePoint(const ProbePoint &p, const CloneOptions &opts = {});

} // namespace sonde::ast
