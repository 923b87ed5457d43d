// Text forms of a script: -p1 (the parsed script, which parses again to the same
// AST) and -p2 (the elaborated script with inferred types, in stap -p2's layout).
#pragma once

#include "ast/Ast.h"

#include <iosfwd>

namespace sonde {

void printParsedScript(const ast::Script &script, std::ostream &out);
void printElaboratedScript(const ast::Script &script, std::ostream &out, bool verbose);

} // namespace sonde
