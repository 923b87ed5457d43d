#include "parse/MacroLibrary.h"

#include "parse/Parser.h"
#include "parse/Preprocessor.h"

namespace sonde {

bool MacroLibrary::addFile(const SourceFile &file, const ParseOptions &opts,
                           DiagnosticEngine &diags) {
  // Top-level invocations of earlier library macros expand, as in stap; only
  // what survives preprocessing is wrong.
  ParseOptions withLibrary = opts;
  withLibrary.libraryMacros = this;
  parse::Preprocessor pp(withLibrary, diags);
  std::vector<parse::LexToken> tokens = pp.run(parse::lexFile(file));

  bool ok = true;
  const parse::LexToken &first = tokens.front(); // EOF when the file only defines
  if (first.error) {
    parse::reportDeferredError(*first.error, diags);
    ok = false;
  } else if (tokens.size() > 1) {
    diags.parseError("unexpected token in library macro file '" + file.name + "'",
                     parse::diagToken(first));
    ok = false;
  } else {
    // The file is taken whole or not at all; stap reports the first clash only.
    for (const auto &[name, macro] : pp.definedMacros()) {
      auto earlier = macros_.find(name);
      if (earlier == macros_.end())
        continue;
      Diagnostic &d = diags.parseError("duplicate definition of library macro '@" + name + "'",
                                       parse::diagToken(macro->nameTok));
      d.chain.push_back(Diagnostic{DiagKind::ParseError,
                                   "macro '@" + name + "' first defined here",
                                   parse::diagToken(earlier->second->nameTok),
                                   false,
                                   {}});
      ok = false;
      break;
    }
  }
  if (!ok) {
    diags.warning("macro tapset \"" + file.name + "\" has errors, and will be skipped.");
    return false;
  }
  for (const auto &[name, macro] : pp.definedMacros()) {
    auto library = std::make_shared<parse::Macro>(*macro);
    library->fromLibrary = true;
    macros_.emplace(name, std::move(library));
  }
  return true;
}

std::shared_ptr<const parse::Macro> MacroLibrary::find(const std::string &name) const {
  auto it = macros_.find(name);
  return it == macros_.end() ? nullptr : it->second;
}

} // namespace sonde
