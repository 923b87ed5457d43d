// Turning ANTLR syntax errors into stap's messages. The parser does no error
// recovery of its own: the first error aborts the current top-level declaration
// and Parser.cpp resynchronises, like stap's parser.
#pragma once

#include "antlr4-runtime.h"

#include <optional>
#include <string>

namespace sonde::parse {

struct SyntaxError {
  const antlr4::Token *offending = nullptr;
  antlr4::misc::IntervalSet expected;
  antlr4::ParserRuleContext *ctx = nullptr; // the rule being parsed
  const antlr4::dfa::Vocabulary *vocabulary = nullptr;
};

// Records the first error, then cancels the parse.
class RecordingBailStrategy : public antlr4::BailErrorStrategy {
public:
  std::optional<SyntaxError> error;

  void reset(antlr4::Parser *recognizer) override;
  void reportError(antlr4::Parser *recognizer, const antlr4::RecognitionException &e) override;
  antlr4::Token *recoverInline(antlr4::Parser *recognizer) override;
};

// The message stap gives for this error (e.g. "expected ')'", "expected
// statement"); `previousType` is the type of the token before the offending one.
std::string syntaxMessage(const SyntaxError &err, size_t previousType);

} // namespace sonde::parse
