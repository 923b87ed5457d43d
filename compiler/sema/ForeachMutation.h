// An array must not change while `foreach` walks it: no write, delete or `<<<`
// to it in the loop body, nor in any function the body calls (directly or
// through other functions).
#pragma once

#include "ast/Ast.h"
#include "sema/SemaDiagnostics.h"

namespace sonde::sema {

void checkForeachMutations(ast::Script &script, SemaDiagnostics &diags);

} // namespace sonde::sema
