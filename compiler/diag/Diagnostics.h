// Diagnostics in stap's format, collected by every pass so one run reports many.
#pragma once

#include "ast/Source.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace sonde {

enum class DiagKind : uint8_t { ParseError, SemanticError, Warning };

struct Diagnostic {
  DiagKind kind;
  std::string message;
  std::optional<Token> tok;
  // Parse errors that say "expected ..." print the token as `saw:` not `at:`.
  bool sawStyle = false;
  // Follow-up blocks printed right after this one ("type was first inferred here").
  std::vector<Diagnostic> chain;
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(std::ostream &out) : out_(out) {}

  // Each returns the stored diagnostic so the caller may append a chain.
  Diagnostic &parseError(std::string msg, const Token &tok, bool sawStyle = false);
  Diagnostic &parseError(std::string msg);
  Diagnostic &semanticError(std::string msg, const Token &tok);
  Diagnostic &semanticError(std::string msg);
  Diagnostic &warning(std::string msg, const Token &tok);
  Diagnostic &warning(std::string msg);

  size_t parseErrors() const { return parseErrors_; }
  size_t semanticErrors() const { return semanticErrors_; }
  size_t warnings() const { return warnings_; }
  bool hasErrors() const { return parseErrors_ + semanticErrors_ > 0; }

  // -w drops warnings, -W makes them errors, -v shows repeated messages.
  void setSuppressWarnings(bool v) { suppressWarnings_ = v; }
  void setWarningsAreErrors(bool v) { warningsAreErrors_ = v; }
  void setVerbose(bool v) { verbose_ = v; }
  void setColor(bool v) { color_ = v; }

  // Prints everything collected so far (de-duplicating identical semantic errors
  // unless verbose) and forgets it. Parse errors end with "N parse error(s).",
  // which stap prints for a script but not for a library macro file.
  void flush(bool countParseErrors = true);

  // Renders one diagnostic exactly as flush() would (for tests).
  std::string render(const Diagnostic &d);

private:
  Diagnostic &add(Diagnostic d);
  void renderInto(std::string &s, const Diagnostic &d);
  std::string describe(const Token &tok);

  std::ostream &out_;
  std::vector<Diagnostic> pending_;
  std::vector<std::string> seenSemantic_;
  size_t suppressedDuplicates_ = 0;
  size_t parseErrors_ = 0, semanticErrors_ = 0, warnings_ = 0;
  bool suppressWarnings_ = false, warningsAreErrors_ = false, verbose_ = false, color_ = false;
};

// stap's weighted Levenshtein score for "did you mean" hints: lower is closer.
unsigned suggestionScore(const std::string &a, const std::string &b);
// The `max` candidates closest to `name` (never `name` itself), closest first,
// as "a, b, c" — stap's "(similar: ...)" list.
// With a non-zero threshold, only names scoring at most that (stap's marker hints).
std::string similarNames(const std::string &name, const std::vector<std::string> &candidates,
                         size_t max = 5, unsigned threshold = 0);

} // namespace sonde
