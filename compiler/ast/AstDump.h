// A structural dump of a parsed script: one s-expression per declaration with
// every field the parser sets (names, operators, literal values, printf format
// components, sort directives, flags), and nothing else: no source locations and
// no sema annotations. Two scripts have equal dumps iff they parsed to the same
// tree, which is what the -p1 round-trip tests compare.
#pragma once

#include "ast/Ast.h"

#include <string>

namespace sonde::ast {

std::string dumpAst(const Script &script);

} // namespace sonde::ast
