// After names are resolved: drop what the script does not use (with stap's
// "Eliding unused ..." warnings for the user's own code; tapset leftovers go
// silently) and warn about variables read but never assigned, statements
// after an unconditional return/next/break/continue, and values computed for
// nothing.
#pragma once

#include "ast/Ast.h"
#include "sema/Elaborate.h"
#include "sema/SemaDiagnostics.h"
#include "sema/SymbolTable.h"

#include <unordered_set>

namespace sonde::sema {

// `reached`: the functions whose bodies were resolved (called from a probe,
// or every user function under -u). Read/written flags of globals must be set.
void elideUnused(ast::Script &script, const std::unordered_set<const ast::FunctionDecl *> &reached,
                 const SymbolTable &table, SemaDiagnostics &diags, const SemaOptions &opts);

void warnNeverAssigned(ast::Script &script, SemaDiagnostics &diags);

void warnUnreachableStatements(ast::Script &script, SemaDiagnostics &diags);

// Expression statements that compute a value and throw it away (`n * 2`).
void warnSideEffectFree(ast::Script &script, SemaDiagnostics &diags);

} // namespace sonde::sema
