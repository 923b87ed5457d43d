// Per-aggregate declarations implied by use: one histogram shape per variable,
// one @variance bit shift (0..62) per variable.
#pragma once

#include "ast/Ast.h"
#include "sema/SemaDiagnostics.h"

namespace sonde::sema {

void checkStatsDeclarations(ast::Script &script, SemaDiagnostics &diags);

} // namespace sonde::sema
