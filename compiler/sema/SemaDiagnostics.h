// The diagnostics front of pass 2. Every derived probe owns a copy of its
// alias and user bodies, so the same finding can come up once per copy: this
// reports each (message, token, chain) once, and keeps warnings about tapset
// code quiet, as stap does.
#pragma once

#include "diag/Diagnostics.h"

#include <string>
#include <unordered_set>

namespace sonde::sema {

class SemaDiagnostics {
public:
  explicit SemaDiagnostics(DiagnosticEngine &engine) : engine_(engine) {}

  // Reports an error (with `chain` printed after it) unless an identical one
  // was already reported.
  void error(std::string msg, const Token &tok, std::vector<Diagnostic> chain = {});
  void error(std::string msg, std::vector<Diagnostic> chain = {});
  void error(Diagnostic d);
  void warning(std::string msg, const Token &tok);

  size_t errorCount() const { return errors_; }

  // A block to chain after an error ("type was first inferred here ...").
  static Diagnostic note(std::string msg, const Token &tok);
  static Diagnostic note(std::string msg);

private:
  static std::string key(const Diagnostic &d);

  DiagnosticEngine &engine_;
  std::unordered_set<std::string> seen_;
  size_t errors_ = 0;
};

} // namespace sonde::sema
