#include "diag/Diagnostics.h"

#include <algorithm>
#include <cctype>
#include <ostream>
#include <set>

namespace sonde {

namespace {

const char *kindText(TokenKind k) {
  switch (k) {
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Operator: return "operator";
  case TokenKind::String: return "string";
  case TokenKind::Number: return "number";
  case TokenKind::Keyword: return "keyword";
  case TokenKind::EmbeddedCode: return "embedded-code";
  case TokenKind::EndOfFile: return "EOF";
  }
  return "token";
}

// The caret line keeps the source line's tabs so the caret lines up in a terminal.
std::string caretLine(std::string_view line, uint32_t col) {
  std::string s;
  for (uint32_t i = 0; i + 1 < col && i < line.size(); ++i)
    s += line[i] == '\t' ? '\t' : ' ';
  s += '^';
  return s;
}

} // namespace

std::string DiagnosticEngine::describe(const Token &tok) {
  std::string s;
  // Every location names its file: stap elides a file name repeated from the
  // line before, which leaves "at :1:5" for a reader to work out.
  const SourceFile *file = tok.loc.file;
  std::string fileName = file ? file->name : std::string();
  if (tok.kind == TokenKind::EndOfFile) {
    s = fileName + " EOF";
    return s;
  }
  s += kindText(tok.kind);
  // stap names keywords and embedded code by kind only.
  if (tok.kind != TokenKind::Keyword && tok.kind != TokenKind::EmbeddedCode)
    s += " '" + tok.text + "'";
  if (tok.loc.valid())
    s += " at " + fileName + ":" + std::to_string(tok.loc.line) + ":" + std::to_string(tok.loc.col);
  return s;
}

Diagnostic &DiagnosticEngine::add(Diagnostic d) {
  switch (d.kind) {
  case DiagKind::ParseError: ++parseErrors_; break;
  case DiagKind::SemanticError: ++semanticErrors_; break;
  case DiagKind::Warning:
    if (warningsAreErrors_) {
      d.kind = DiagKind::SemanticError;
      ++semanticErrors_;
    } else {
      ++warnings_;
    }
    break;
  }
  pending_.push_back(std::move(d));
  return pending_.back();
}

Diagnostic &DiagnosticEngine::parseError(std::string msg, const Token &tok, bool sawStyle) {
  return add({DiagKind::ParseError, std::move(msg), tok, sawStyle, {}});
}
Diagnostic &DiagnosticEngine::parseError(std::string msg) {
  return add({DiagKind::ParseError, std::move(msg), std::nullopt, false, {}});
}
Diagnostic &DiagnosticEngine::semanticError(std::string msg, const Token &tok) {
  return add({DiagKind::SemanticError, std::move(msg), tok, false, {}});
}
Diagnostic &DiagnosticEngine::semanticError(std::string msg) {
  return add({DiagKind::SemanticError, std::move(msg), std::nullopt, false, {}});
}
Diagnostic &DiagnosticEngine::warning(std::string msg, const Token &tok) {
  return add({DiagKind::Warning, std::move(msg), tok, false, {}});
}
Diagnostic &DiagnosticEngine::warning(std::string msg) {
  return add({DiagKind::Warning, std::move(msg), std::nullopt, false, {}});
}

void DiagnosticEngine::renderInto(std::string &s, const Diagnostic &d) {
  auto paint = [&](const char *sgr, const std::string &text) {
    return color_ ? std::string("\033[") + sgr + "m" + text + "\033[m" : text;
  };
  switch (d.kind) {
  case DiagKind::ParseError: {
    s += paint("01;31", "parse error:") + " " + d.message + "\n";
    if (d.tok) {
      s += d.sawStyle ? "        saw: " : "         at: ";
      s += describe(*d.tok) + "\n";
      if (d.tok->loc.valid()) {
        auto line = d.tok->loc.file->line(d.tok->loc.line);
        s += "     source: " + std::string(line) + "\n";
        s += "             " + paint("01;32", caretLine(line, d.tok->loc.col)) + "\n";
      }
    }
    s += "\n";
    for (const auto &c : d.chain)
      renderInto(s, c);
    return;
  }
  case DiagKind::SemanticError:
  case DiagKind::Warning: {
    bool warn = d.kind == DiagKind::Warning;
    s += warn ? paint("01;35", "WARNING:") : paint("01;31", "semantic error:");
    s += " " + d.message;
    if (d.tok) {
      s += ": " + describe(*d.tok) + "\n";
      if (d.tok->loc.valid()) {
        // stap indents a warning's source one column, an error's eight.
        std::string label = warn ? " source: " : "        source: ";
        auto line = d.tok->loc.file->line(d.tok->loc.line);
        s += label + std::string(line) + "\n";
        s +=
            std::string(label.size(), ' ') + paint("01;32", caretLine(line, d.tok->loc.col)) + "\n";
      }
    } else {
      s += "\n";
    }
    if (!warn)
      s += "\n";
    for (const auto &c : d.chain)
      renderInto(s, c);
    return;
  }
  }
}

std::string DiagnosticEngine::render(const Diagnostic &d) {
  std::string s;
  renderInto(s, d);
  return s;
}

void DiagnosticEngine::flush(bool countParseErrors) {
  std::string s;
  size_t parseCount = 0;
  for (const auto &d : pending_) {
    if (d.kind == DiagKind::Warning && suppressWarnings_)
      continue;
    if (d.kind == DiagKind::ParseError)
      ++parseCount;
    if (d.kind == DiagKind::SemanticError && !verbose_) {
      // stap de-duplicates identical messages (same text and token).
      std::string key = d.message + (d.tok ? "@" + d.tok->text : std::string());
      if (d.tok && d.tok->loc.file)
        key += d.tok->loc.file->name + ":" + std::to_string(d.tok->loc.line) + ":" +
               std::to_string(d.tok->loc.col);
      if (std::find(seenSemantic_.begin(), seenSemantic_.end(), key) != seenSemantic_.end()) {
        ++suppressedDuplicates_;
        continue;
      }
      seenSemantic_.push_back(key);
    }
    renderInto(s, d);
  }
  if (countParseErrors && parseCount > 0)
    s += std::to_string(parseCount) + (parseCount == 1 ? " parse error.\n" : " parse errors.\n");
  if (suppressedDuplicates_ > 0) {
    s += "Number of similar error messages suppressed: " + std::to_string(suppressedDuplicates_) +
         ".\nRerun with -v to see them.\n";
    suppressedDuplicates_ = 0;
  }
  out_ << s;
  out_.flush();
  pending_.clear();
}

unsigned suggestionScore(const std::string &a, const std::string &b) {
  // stap's weights (util.cxx levenshtein): inside the strings an insertion,
  // deletion or substitution costs 2 and a change of case only 1, but the first
  // row and column count 1 per character, so a prefix of either string is cheap
  // to drop. That quirk decides which names stap lists, so it is kept.
  std::vector<unsigned> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = static_cast<unsigned>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<unsigned>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const unsigned char x = a[i - 1], y = b[j - 1];
      if (x == y) {
        cur[j] = prev[j - 1];
        continue;
      }
      const unsigned substitution = std::tolower(x) == std::tolower(y) ? 1 : 2;
      cur[j] = std::min({prev[j - 1] + substitution, prev[j] + 2, cur[j - 1] + 2});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string similarNames(const std::string &name, const std::vector<std::string> &candidates,
                         size_t max, unsigned threshold) {
  // stap's levenshtein_suggest as elaborate.cxx calls it: no score threshold,
  // the best `max` names by score, ties in byte order (stap walks a std::set).
  std::set<std::string> unique(candidates.begin(), candidates.end());
  unique.erase("");
  unique.erase(name);
  std::vector<std::pair<unsigned, std::string>> scored;
  scored.reserve(unique.size());
  for (const auto &c : unique)
    if (unsigned score = suggestionScore(name, c); threshold == 0 || score <= threshold)
      scored.emplace_back(score, c);
  std::sort(scored.begin(), scored.end()); // by score, then name
  std::string s;
  for (size_t i = 0; i < scored.size() && i < max; ++i)
    s += (i ? ", " : "") + scored[i].second;
  return s;
}

} // namespace sonde
