// What kernel.trace handlers cannot do once compiled to BPF, reported at pass 2
// with the construct's place instead of a verifier log at load time.
#pragma once

#include "ast/Ast.h"
#include "sema/SemaDiagnostics.h"

namespace sonde::sema {

void checkKernelProbes(ast::Script &script, SemaDiagnostics &diags);

} // namespace sonde::sema
