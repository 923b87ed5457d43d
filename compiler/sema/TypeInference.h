// stap's fixed-point type inference: repeated passes over every function,
// derived probe, probe condition and global, propagating known types through
// the constraints of language.md §3 until nothing changes; then one last pass
// that reports what is still unknown. Fills Expr::type everywhere, and the
// types of globals (value and indexes), locals, parameters and return values.
#pragma once

#include "ast/Ast.h"
#include "sema/SemaDiagnostics.h"

namespace sonde::sema {

// Runs inference over the script's functions, derived probes and globals
// (unused ones must already be gone). Errors go to `diags`.
void inferTypes(ast::Script &script, SemaDiagnostics &diags);

} // namespace sonde::sema
