// Pass 1: script text -> AST. Runs the ANTLR lexer, the token-level preprocessor
// ($N/@N arguments, @define macros, %( %? %: %) conditionals), the ANTLR parser,
// and AstBuilder.
#pragma once

#include "ast/Ast.h"
#include "diag/Diagnostics.h"

#include <string>
#include <vector>

namespace sonde {

class MacroLibrary;

struct ParseOptions {
  std::vector<std::string> scriptArgs; // $1 / @1 ... from the command line
  // Values the %( %) conditions compare against.
  std::string kernelVersion;  // kernel_v, e.g. "6.18.0"
  std::string kernelRelease;  // kernel_vr, `uname -r`
  std::string arch = "x86_64";
  std::string runtime = "kernel";
  std::string compatible = "5.5"; // systemtap_v
  std::string privilege = "stapdev";
  // CONFIG_* lookups; empty string when unset.
  std::string (*kernelConfig)(const std::string &name) = nullptr;
  // The tapset *.stpm macros, visible to every file unless it defines the same
  // name itself; null for none.
  const MacroLibrary *libraryMacros = nullptr;
};

// Parses `file` and appends its declarations to `script`. Reports every parse
// error to `diags` (recovering at the next probe/global/function/private) and
// returns false if there was any.
bool parseScript(const SourceFile &file, const ParseOptions &opts, DiagnosticEngine &diags,
                 ast::Script &script);

} // namespace sonde
