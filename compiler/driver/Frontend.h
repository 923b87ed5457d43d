// Passes 1-2 as one object: load the script and the tapset library, parse,
// elaborate. Used by the `sonde` driver, the tests and the fuzzer alike.
#pragma once

#include "ast/Ast.h"
#include "diag/Diagnostics.h"
#include "parse/MacroLibrary.h"
#include "parse/Parser.h"
#include "sema/Elaborate.h"

#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sonde {

struct FrontendOptions {
  ParseOptions parse;
  SemaOptions sema;
  std::vector<std::string> includeDirs; // -I DIR, searched after the stdlib
  bool loadStdlib = true;
};

class Frontend {
public:
  Frontend(std::ostream &diagOut, FrontendOptions opts);

  // Pass 1 for the user's script (`name` is what diagnostics call the file).
  // Returns false on parse errors; diagnostics are flushed before returning.
  // The first parse of either kind loads the tapset directories' *.stpm macros
  // (stdlib, then -I); while any of those files is broken, every parse fails.
  bool parseUserScript(std::string name, std::string text);
  // Pass 1 for the *.probe files of the tapset directories (stdlib, then -I)
  // that define a name the scripts parsed so far use (Needed), or all of them.
  enum class LibraryParse { Needed, All };
  bool parseLibraries(LibraryParse which = LibraryParse::Needed);
  // Pass 2. Returns false on semantic errors; diagnostics are flushed.
  bool elaborate();

  ast::Script &script() { return script_; }
  DiagnosticEngine &diags() { return diags_; }
  SourceManager &sources() { return sources_; }
  const FrontendOptions &options() const { return opts_; }

  // The tapset directories in search order.
  std::vector<std::string> libraryDirs() const;

private:
  bool parseFile(const SourceFile &file);
  bool loadLibraryMacros();

  FrontendOptions opts_;
  SourceManager sources_;
  DiagnosticEngine diags_;
  ast::Script script_;
  MacroLibrary macros_;
  std::optional<bool> macrosLoaded_;      // set by the first parse: whether all loaded cleanly
  std::set<std::string> referencedWords_; // words of the user's scripts and the macros
};

} // namespace sonde
