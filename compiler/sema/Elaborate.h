// Pass 2: name resolution, probe-alias expansion, probe-point checks, stap's
// fixed-point type inference and the semantic checks, annotating the AST in place.
#pragma once

#include "ast/Ast.h"
#include "diag/Diagnostics.h"

#include <string>

namespace sonde {

struct SemaOptions {
  bool unoptimized = false;  // -u: keep unused functions and globals
  bool skipBadvars = false;  // --skip-badvars
  std::string targetCommand; // -c CMD: a bare `process` probes its program
};

// Returns false if any semantic error was reported.
bool elaborate(ast::Script &script, DiagnosticEngine &diags, const SemaOptions &opts);

} // namespace sonde
