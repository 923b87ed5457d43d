// Assignments to locals nothing reads, dropped as stap's pass 2 drops them
// (`argstr = sprintf(...)` in a syscall alias the script never uses): their
// value is never used, and their right side has no effect but a possible error,
// which stap elides with them.
#pragma once

#include "ast/Ast.h"

#include <unordered_set>

namespace sonde::codegen {

// The `local = value` statements of `body` (and `condition`) to skip: the local
// is read nowhere else, the value calls no script function and assigns nothing.
// Found to a fixed point, so a local read only by dropped statements is dead too.
std::unordered_set<const ast::Stmt *> deadLocalStores(ast::Stmt &body, ast::Expr *condition);

} // namespace sonde::codegen
