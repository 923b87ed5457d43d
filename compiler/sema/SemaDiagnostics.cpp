#include "sema/SemaDiagnostics.h"

namespace sonde::sema {

std::string SemaDiagnostics::key(const Diagnostic &d) {
  std::string k = std::to_string(static_cast<int>(d.kind)) + "|" + d.message;
  if (d.tok) {
    k += "|" + d.tok->text;
    if (d.tok->loc.file)
      k += "@" + d.tok->loc.file->name + ":" + std::to_string(d.tok->loc.line) + ":" +
           std::to_string(d.tok->loc.col);
  }
  for (const auto &c : d.chain)
    k += "\n" + key(c);
  return k;
}

void SemaDiagnostics::error(Diagnostic d) {
  if (!seen_.insert(key(d)).second)
    return;
  ++errors_;
  Diagnostic &stored =
      d.tok ? engine_.semanticError(d.message, *d.tok) : engine_.semanticError(d.message);
  stored.chain = std::move(d.chain);
}

void SemaDiagnostics::error(std::string msg, const Token &tok, std::vector<Diagnostic> chain) {
  error(Diagnostic{DiagKind::SemanticError, std::move(msg), tok, false, std::move(chain)});
}

void SemaDiagnostics::error(std::string msg, std::vector<Diagnostic> chain) {
  error(Diagnostic{DiagKind::SemanticError, std::move(msg), std::nullopt, false, std::move(chain)});
}

void SemaDiagnostics::warning(std::string msg, const Token &tok) {
  // Tapset code is not the user's to fix.
  if (tok.loc.file && tok.loc.file->isLibrary)
    return;
  Diagnostic d{DiagKind::Warning, std::move(msg), tok, false, {}};
  if (!seen_.insert(key(d)).second)
    return;
  engine_.warning(d.message, tok);
}

Diagnostic SemaDiagnostics::note(std::string msg, const Token &tok) {
  return Diagnostic{DiagKind::SemanticError, std::move(msg), tok, false, {}};
}

Diagnostic SemaDiagnostics::note(std::string msg) {
  return Diagnostic{DiagKind::SemanticError, std::move(msg), std::nullopt, false, {}};
}

} // namespace sonde::sema
