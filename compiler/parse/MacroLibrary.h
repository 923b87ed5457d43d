// Library macros (language.md 1): the @defines of the tapset directories'
// *.stpm files, loaded before any script is parsed and visible to every file.
#pragma once

#include "diag/Diagnostics.h"
#include "parse/Lexer.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sonde {

struct ParseOptions;

namespace parse {

struct Macro;
using ParamMap = std::map<std::string, std::shared_ptr<const Macro>>;

// One @define, or one argument of a macro invocation.
struct Macro {
  LexToken nameTok;
  std::vector<std::string> formals;
  std::vector<LexToken> body;
  // Defined in a *.stpm file: its body sees library macros only, never those of
  // the file it is expanded in (as in stap).
  bool fromLibrary = false;
  // A macro argument is a closure: its tokens expand with the caller's
  // parameters in scope.
  bool isParam = false;
  std::shared_ptr<ParamMap> closure;
};

} // namespace parse

class MacroLibrary {
public:
  // Preprocesses one *.stpm file (its %( %) conditions see `opts`) and adds its
  // @defines. A file holding anything else or an error, or redefining a macro
  // another library file defined, is reported with stap's "will be skipped"
  // warning and adds nothing; the result is then false.
  bool addFile(const SourceFile &file, const ParseOptions &opts, DiagnosticEngine &diags);

  // The library's definition of @name, or null.
  std::shared_ptr<const parse::Macro> find(const std::string &name) const;
  size_t size() const { return macros_.size(); }

private:
  std::map<std::string, std::shared_ptr<const parse::Macro>> macros_;
};

} // namespace sonde
