// Which built-in functions a script's probes reach, for choices made before it
// runs (switch_file() needs every record to pass through sonde).
#pragma once

#include "ast/Ast.h"

#include <string_view>

namespace sonde::sema {

// Whether a probe of the elaborated script, or a function it reaches, calls the
// built-in `name`.
bool callsBuiltin(ast::Script &script, std::string_view name);

} // namespace sonde::sema
