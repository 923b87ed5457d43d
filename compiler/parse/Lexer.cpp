#include "parse/Lexer.h"

#include "parse/Literals.h"

#include "SondeLexer.h"
#include "antlr4-runtime.h"

#include <cctype>

namespace sonde::parse {

using sonde_antlr::SondeLexer;

namespace {

// Feeds the lexer one byte per character, so that token offsets and columns are
// byte offsets (SourceLoc columns are in bytes) and any byte sequence lexes.
class ByteStream : public antlr4::ANTLRInputStream {
public:
  explicit ByteStream(std::string_view bytes) {
    _data.reserve(bytes.size());
    for (unsigned char c : bytes)
      _data.push_back(c);
  }
};

// Lexer errors are impossible (JUNK matches any byte); keep ANTLR quiet anyway.
class SilentListener : public antlr4::BaseErrorListener {
  void syntaxError(antlr4::Recognizer *, antlr4::Token *, size_t, size_t, const std::string &,
                   std::exception_ptr) override {}
};

// Runs the ANTLR lexer over `text`; `place` fills in loc/origin of each token.
template <class Place>
std::vector<LexToken> runLexer(std::string_view text, Place place, bool wantEof) {
  ByteStream input(text);
  SondeLexer lexer(&input);
  SilentListener quiet;
  lexer.removeErrorListeners();
  lexer.addErrorListener(&quiet);
  std::vector<LexToken> out;
  out.reserve(text.size() / 4 + 1);
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    LexToken lt;
    lt.type = t->getType();
    if (lt.type == antlr4::Token::EOF) {
      if (wantEof) {
        lt.begin = lt.end = static_cast<uint32_t>(text.size());
        place(lt, *t);
        out.push_back(std::move(lt));
      }
      break;
    }
    lt.begin = static_cast<uint32_t>(t->getStartIndex());
    lt.end = static_cast<uint32_t>(t->getStopIndex() + 1);
    lt.text = std::string(text.substr(lt.begin, lt.end - lt.begin));
    place(lt, *t);
    if (lt.type == SondeLexer::STRING && !isTerminatedString(lt.text))
      lt = errorToken(lt, "Could not find matching closing quote", false);
    else if (lt.type == SondeLexer::EMBEDDED &&
             (lt.text.size() < 4 || lt.text.compare(lt.text.size() - 2, 2, "%}") != 0))
      lt = errorToken(lt, "Could not find matching '%}' to close embedded function block", false);
    else if (lt.type == SondeLexer::JUNK && !std::ispunct(static_cast<unsigned char>(lt.text[0])))
      lt = errorToken(lt, "unknown junk token", false);
    out.push_back(std::move(lt));
  }
  return out;
}

} // namespace

std::vector<LexToken> lexFile(const SourceFile &file) {
  return runLexer(
      file.text,
      [&](LexToken &lt, const antlr4::Token &t) {
        lt.loc.file = &file;
        if (lt.type == antlr4::Token::EOF)
          return; // stap names EOF by file only, without a line to show

        lt.loc.line = static_cast<uint32_t>(t.getLine());
        lt.loc.col = static_cast<uint32_t>(t.getCharPositionInLine() + 1);
      },
      /*wantEof=*/true);
}

std::vector<LexToken> lexSplice(std::string_view text, const LexToken &at, uint32_t origin) {
  return runLexer(
      text,
      [&](LexToken &lt, const antlr4::Token &) {
        lt.loc = at.loc;
        lt.origin = origin;
      },
      /*wantEof=*/false);
}

bool isKeyword(size_t type) { return type >= SondeLexer::PROBE && type <= SondeLexer::CATCH; }

Token diagToken(const LexToken &t) {
  Token tok;
  tok.loc = t.loc;
  tok.text = t.text;
  switch (t.type) {
  case SondeLexer::IDENTIFIER:
  case SondeLexer::TARGET:
  case SondeLexer::DOLLARS: tok.kind = TokenKind::Identifier; break;
  case SondeLexer::NUMBER: tok.kind = TokenKind::Number; break;
  case SondeLexer::STRING:
    tok.kind = TokenKind::String;
    tok.text = decodeString(t.text);
    break;
  case SondeLexer::EMBEDDED: tok.kind = TokenKind::EmbeddedCode; break;
  case antlr4::Token::EOF:
    tok.kind = TokenKind::EndOfFile;
    tok.text.clear();
    break;
  default:
    if (isKeyword(t.type))
      tok.kind = TokenKind::Keyword;
    else if (t.type >= SondeLexer::PRINT && t.type <= SondeLexer::PRINT_CHAR)
      tok.kind = TokenKind::Identifier;
    else
      tok.kind = TokenKind::Operator;
  }
  return tok;
}

LexToken errorToken(const LexToken &blame, std::string message, bool sawStyle,
                    bool reportWhenSkipped) {
  auto err = std::make_shared<DeferredError>();
  err->message = std::move(message);
  err->at = diagToken(blame);
  err->sawStyle = sawStyle;
  err->reportWhenSkipped = reportWhenSkipped;
  LexToken t = blame;
  t.type = SondeLexer::JUNK;
  t.error = std::move(err);
  return t;
}

void reportDeferredError(const DeferredError &e, DiagnosticEngine &diags) {
  Diagnostic &d = diags.parseError(e.message, e.at, e.sawStyle);
  if (!e.noteMessage.empty())
    d.chain.push_back(Diagnostic{DiagKind::ParseError, e.noteMessage, e.noteAt, false, {}});
}

} // namespace sonde::parse
