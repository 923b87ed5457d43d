// The token vector that flows from the ANTLR lexer through the preprocessor to
// the parser, with the locations and adjacency the later stages need.
#pragma once

#include "ast/Source.h"
#include "diag/Diagnostics.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::parse {

// An error discovered before parsing (bad literal text, preprocessor misuse). It
// rides in the token stream as a token no grammar rule accepts, so it is reported
// exactly when stap would report it: when the parser reaches that point, or while
// it skips ahead after an earlier error.
struct DeferredError {
  std::string message;
  Token at;
  bool sawStyle = false;
  // Preprocessor errors are reported even inside text skipped after an earlier
  // error; bad lexemes (an unclosed string) only when the parser reaches them.
  bool reportWhenSkipped = false;
  std::string noteMessage; // optional chained block ("macro '@x' first defined here")
  Token noteAt;
};

struct LexToken {
  size_t type = 0;  // a SondeLexer token type, or antlr4::Token::EOF
  std::string text; // as written (string literals keep their quotes and escapes)
  SourceLoc loc;
  // Adjacency: tokens are glued when they share an origin (0 = the file itself,
  // otherwise one spliced command-line argument) and end == next begin.
  uint32_t origin = 0;
  uint32_t begin = 0, end = 0;
  std::shared_ptr<const DeferredError> error; // set on error tokens only
};

// Lexes a whole file. Comments and whitespace are dropped; the last token is EOF.
std::vector<LexToken> lexFile(const SourceFile &file);

// Lexes text spliced in for a `$N`/`@N` argument: every token is located at
// `at` (as stap does) and gets `origin` for adjacency. No EOF token.
std::vector<LexToken> lexSplice(std::string_view text, const LexToken &at, uint32_t origin);

// The diagnostic view of a token: kind (keyword, operator, ...) and text
// (string literals decoded, without quotes).
Token diagToken(const LexToken &t);

// True for token types that stap calls keywords.
bool isKeyword(size_t type);

// A token carrying an error in place of the token it blames.
LexToken errorToken(const LexToken &blame, std::string message, bool sawStyle,
                    bool reportWhenSkipped = false);

// Reports a deferred error as the parse error it stands for, with its note.
void reportDeferredError(const DeferredError &e, DiagnosticEngine &diags);

} // namespace sonde::parse
