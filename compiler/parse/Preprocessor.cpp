#include "parse/Preprocessor.h"

#include "SondeLexer.h"

#include <algorithm>
#include <cctype>

namespace sonde::parse {

using sonde_antlr::SondeLexer;

namespace {

// Far deeper than any real macro use; a macro that invokes itself, directly or
// through others, would otherwise expand until memory runs out.
constexpr size_t kMaxMacroNesting = 1000;
// Macros that each use the one before twice (@m1 is @m0 @m0, @m2 is @m1 @m1,
// ...) expand exponentially without nesting deeply: the tokens read from macro
// bodies in one file are bounded too (the whole tapset library reads a few
// thousand).
constexpr size_t kMaxMacroTokens = 1000000;

bool isArgumentReference(const LexToken &t) {
  if (t.type == SondeLexer::ARGCOUNT_RAW || t.type == SondeLexer::ARGCOUNT_STR)
    return true;
  return (t.type == SondeLexer::TARGET || t.type == SondeLexer::ATWORD) && t.text.size() > 1 &&
         std::isdigit(static_cast<unsigned char>(t.text[1]));
}

bool isAtWord(size_t type) {
  return type == SondeLexer::ATWORD ||
         (type >= SondeLexer::AT_CAST && type <= SondeLexer::AT_ENUMNAME);
}

bool isIdentifier(size_t type) {
  return type == SondeLexer::IDENTIFIER ||
         (type >= SondeLexer::PRINT && type <= SondeLexer::PRINT_CHAR);
}

bool isBuiltinAtWord(const std::string &name) {
  static const char *const words[] = {
      "cast",     "defined",   "probewrite", "entry",  "perf",        "var",      "avg",
      "count",    "sum",       "min",        "max",    "hist_linear", "hist_log", "const",
      "variance", "kregister", "uregister",  "kderef", "uderef",      "enum",     "enumname"};
  for (const char *w : words)
    if (name == w)
      return true;
  return false;
}

// @N inserts the argument as a string literal.
std::string quoteArgument(const std::string &s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

} // namespace

std::vector<LexToken> Preprocessor::run(std::vector<LexToken> tokens) {
  LexToken eof = std::move(tokens.back());
  tokens.pop_back();
  input_ = substituteArguments(std::move(tokens));
  inputPos_ = 0;
  // Most files have no macros or conditionals: nothing else to do.
  bool plain = true;
  for (const LexToken &t : input_)
    plain = plain && t.type != SondeLexer::PP_OPEN && t.type != SondeLexer::PP_THEN &&
            t.type != SondeLexer::PP_ELSE && t.type != SondeLexer::PP_CLOSE &&
            !(t.type == SondeLexer::ATWORD && t.text == "@define") && !isLibraryMacro(t);
  if (plain) {
    input_.push_back(std::move(eof));
    return std::move(input_);
  }
  output_.reserve(input_.size() + 1);
  while (auto t = nextConditional())
    output_.push_back(std::move(*t));
  output_.push_back(std::move(eof));
  return std::move(output_);
}

// ------------------------------------------------------------ arguments

std::vector<LexToken> Preprocessor::substituteArguments(std::vector<LexToken> tokens) {
  usedArgs_.assign(opts_.scriptArgs.size(), false);
  bool any = false;
  for (const auto &t : tokens)
    any |= isArgumentReference(t);
  if (!any)
    return tokens;
  std::vector<LexToken> out;
  out.reserve(tokens.size());
  for (auto &t : tokens) {
    if (isArgumentReference(t))
      spliceArgument(t, out);
    else
      out.push_back(std::move(t));
  }
  return out;
}

void Preprocessor::spliceArgument(const LexToken &t, std::vector<LexToken> &out) {
  const size_t count = opts_.scriptArgs.size();
  const bool quoted = t.text[0] == '@';
  std::string text;
  size_t restStart = t.text.size();
  if (t.type == SondeLexer::ARGCOUNT_RAW || t.type == SondeLexer::ARGCOUNT_STR) {
    text = quoted ? quoteArgument(std::to_string(count)) : std::to_string(count);
  } else {
    // Like stap, read digits only while the number can still name an argument.
    size_t idx = 0, i = 1;
    do {
      idx = idx * 10 + static_cast<size_t>(t.text[i] - '0');
      ++i;
    } while (i < t.text.size() && std::isdigit(static_cast<unsigned char>(t.text[i])) &&
             idx <= count);
    restStart = i;
    if (idx == 0 || idx > count) {
      LexToken bad = t;
      bad.text = t.text.substr(0, i);
      out.push_back(errorToken(
          bad, "command line argument out of range [1-" + std::to_string(count) + "]", false));
      for (auto &s : lexSplice(t.text.substr(i), t, nextOrigin_++))
        out.push_back(std::move(s));
      return;
    }
    usedArgs_[idx - 1] = true;
    const std::string &arg = opts_.scriptArgs[idx - 1];
    text = quoted ? quoteArgument(arg) : arg;
  }
  // The rest of the token (`$1abc`) continues the spliced text, as in stap's
  // character-level substitution.
  text += t.text.substr(restStart);
  for (auto &s : lexSplice(text, t, nextOrigin_++)) {
    if (isArgumentReference(s))
      out.push_back(errorToken(s, "invalid nested substitution of command line arguments", false));
    else
      out.push_back(std::move(s));
  }
}

// ------------------------------------------------------------ macros

std::optional<LexToken> Preprocessor::nextRaw() {
  if (activations_.empty()) {
    if (inputPos_ < input_.size())
      return std::move(input_[inputPos_++]); // each input token is read once
    return std::nullopt;
  }
  Activation &act = activations_.back();
  if (act.cursor < act.macro->body.size()) {
    ++macroTokens_;
    return act.macro->body[act.cursor++];
  }
  return std::nullopt;
}

std::shared_ptr<const Macro> Preprocessor::findMacro(const std::string &name) const {
  const Activation *act = activations_.empty() ? nullptr : &activations_.back();
  if (act && act->params) {
    auto it = act->params->find(name);
    if (it != act->params->end())
      return it->second;
  }
  if (!(act && act->macro->fromLibrary)) {
    auto it = macros_.find(name);
    if (it != macros_.end())
      return it->second;
  }
  return opts_.libraryMacros ? opts_.libraryMacros->find(name) : nullptr;
}

bool Preprocessor::isLibraryMacro(const LexToken &t) const {
  return opts_.libraryMacros && isAtWord(t.type) && t.text.size() > 1 &&
         opts_.libraryMacros->find(t.text.substr(1));
}

std::optional<LexToken> Preprocessor::nextExpanded(bool ignoreDefines) {
  for (;;) {
    if (macroTokens_ > kMaxMacroTokens && !activations_.empty()) {
      // Abandon the expansion and what it gave so far (the parser need not
      // wade through it); the file goes on, its later macros unexpanded.
      activations_.clear();
      if (!tooManyMacroTokens_) {
        tooManyMacroTokens_ = true;
        output_.resize(std::min(output_.size(), outerCallOutput_));
        return errorToken(outerCall_,
                          "macro expansion too large (limit " + std::to_string(kMaxMacroTokens) +
                              " tokens from macros in a file)",
                          false, true);
      }
    }
    std::optional<LexToken> t = nextRaw();
    if (!t) {
      if (activations_.empty())
        return std::nullopt;
      activations_.pop_back();
      continue;
    }
    if (t->type == SondeLexer::ATWORD && t->text == "@define" && !ignoreDefines) {
      if (auto err = defineMacro(*t))
        return err;
      continue;
    }
    if (isAtWord(t->type) && t->text.size() > 1) {
      std::shared_ptr<const Macro> m = findMacro(t->text.substr(1));
      if (!m)
        return t; // an ordinary @operator
      if (auto err = invokeMacro(*t, std::move(m)))
        return err;
      continue;
    }
    return t;
  }
}

std::optional<LexToken> Preprocessor::defineMacro(const LexToken &defineTok) {
  // After a misplaced or duplicate definition the whole definition is still
  // consumed, so that its body does not cascade into more errors.
  std::optional<LexToken> problem;
  if (!activations_.empty())
    problem = errorToken(defineTok, "'@define' forbidden inside macro body", false, true);
  std::optional<LexToken> t = nextRaw();
  if (!t || !isIdentifier(t->type))
    return problem ? problem : errorToken(t ? *t : defineTok, "expected identifier", false, true);
  const std::string name = t->text;
  if (problem) {
  } else if (auto it = macros_.find(name); it != macros_.end()) {
    problem =
        errorToken(*t, "attempt to redefine macro '@" + name + "' in the same file", false, true);
    auto withNote = std::make_shared<DeferredError>(*problem->error);
    withNote->noteMessage = "macro '@" + name + "' first defined here";
    withNote->noteAt = diagToken(it->second->nameTok);
    problem->error = std::move(withNote);
  } else if (name == "define") {
    problem = errorToken(*t, "attempt to redefine '@define'", false, true);
  } else if (isBuiltinAtWord(name)) {
    diags_.warning("macro redefines built-in operator '@" + name + "'", diagToken(*t));
  }

  auto macro = std::make_shared<Macro>();
  macro->nameTok = *t;
  if (!problem)
    macros_[name] = macro;

  bool sawParams = false;
  t = nextRaw();
  if (t && t->type == SondeLexer::LPAREN) {
    sawParams = true;
    for (;;) {
      t = nextRaw();
      if (!t || !isIdentifier(t->type))
        return problem ? problem
                       : errorToken(t ? *t : macro->nameTok, "expected identifier", false, true);
      macro->formals.push_back(t->text);
      t = nextRaw();
      if (t && t->type == SondeLexer::COMMA)
        continue;
      if (t && t->type == SondeLexer::RPAREN) {
        t = nextRaw();
        break;
      }
      return problem ? problem
                     : errorToken(t ? *t : macro->nameTok, "expected ',' or ')'", false, true);
    }
  }
  if (!t || t->type != SondeLexer::PP_OPEN)
    return problem ? problem
                   : errorToken(t ? *t : macro->nameTok,
                                sawParams ? "expected '%('" : "expected '%(' or '('", false, true);
  int nesting = 0;
  for (;;) {
    t = nextRaw();
    if (!t)
      return problem ? problem
                     : errorToken(macro->nameTok, "incomplete macro definition - missing '%)'",
                                  false, true);
    if (t->type == SondeLexer::PP_OPEN)
      ++nesting;
    else if (t->type == SondeLexer::PP_CLOSE && nesting-- == 0)
      return problem;
    macro->body.push_back(std::move(*t));
  }
}

std::optional<LexToken> Preprocessor::invokeMacro(const LexToken &callTok,
                                                  std::shared_ptr<const Macro> macro) {
  if (activations_.size() >= kMaxMacroNesting) {
    activations_.clear(); // abandon the runaway expansion; the file goes on
    return errorToken(callTok,
                      "too many nested macro expansions (limit " +
                          std::to_string(kMaxMacroNesting) + ")",
                      false, true);
  }
  const std::string name = callTok.text.substr(1);
  if (activations_.empty()) {
    outerCall_ = callTok;
    outerCallOutput_ = output_.size();
  }
  std::shared_ptr<ParamMap> callerParams =
      activations_.empty() ? nullptr : activations_.back().params;
  Activation act;
  act.macro = macro;
  const size_t n = macro->formals.size();
  if (n == 0) {
    if (macro->isParam)
      act.params = macro->closure;
    activations_.push_back(std::move(act));
    return std::nullopt;
  }
  std::optional<LexToken> t = nextRaw();
  if (!t || t->type != SondeLexer::LPAREN)
    return errorToken(t ? *t : callTok,
                      "expected '(' in invocation of macro '@" + name + "' taking " +
                          std::to_string(n) + (n == 1 ? " parameter" : " parameters"),
                      false, true);
  act.params = std::make_shared<ParamMap>();
  for (size_t i = 0; i < n; ++i) {
    auto param = std::make_shared<Macro>();
    param->nameTok = callTok;
    param->isParam = true;
    param->closure = callerParams;
    // An argument ends at an unbracketed ',' or ')'; '[' nests too, for @p[i].
    int nesting = 0;
    for (;;) {
      t = nextRaw();
      if (!t)
        break;
      if (t->type == SondeLexer::LPAREN || t->type == SondeLexer::LBRACKET)
        ++nesting;
      else if (nesting && (t->type == SondeLexer::RPAREN || t->type == SondeLexer::RBRACKET))
        --nesting;
      else if (!nesting && (t->type == SondeLexer::RPAREN || t->type == SondeLexer::COMMA))
        break;
      param->body.push_back(std::move(*t));
    }
    if (!t)
      return errorToken(callTok, "could not find end of macro invocation", false, true);
    if (t->type == SondeLexer::COMMA && i + 1 == n)
      return errorToken(
          *t, "too many parameters for macro '@" + name + "' (expected " + std::to_string(n) + ")",
          false, true);
    if (t->type == SondeLexer::RPAREN && i + 1 != n)
      return errorToken(
          *t, "too few parameters for macro '@" + name + "' (expected " + std::to_string(n) + ")",
          false, true);
    (*act.params)[macro->formals[i]] = std::move(param);
  }
  activations_.push_back(std::move(act));
  return std::nullopt;
}

// ------------------------------------------------------------ conditionals

std::optional<LexToken> Preprocessor::nextConditional() {
  for (;;) {
    const bool open = !conds_.empty();
    const Cond state = open ? conds_.back().second : Cond::KeepThen;
    const bool skipping = open && (state == Cond::SkipThen || state == Cond::SkipElse);
    std::optional<LexToken> t = skipping ? skipBranch() : nextExpanded(false);
    if (!t) {
      if (!open)
        return std::nullopt;
      LexToken start = conds_.back().first;
      conds_.pop_back();
      return errorToken(start, "incomplete conditional at end of file", false, true);
    }
    switch (t->type) {
    case SondeLexer::PP_THEN:
      return errorToken(*t, "incomplete conditional - missing '%('", false, true);
    case SondeLexer::PP_ELSE:
      if (!open)
        return errorToken(*t, "incomplete conditional - missing '%('", false, true);
      if (state == Cond::KeepElse || state == Cond::SkipElse)
        return errorToken(*t, "invalid conditional - duplicate '%:'", false, true);
      conds_.back().second = state == Cond::KeepThen ? Cond::SkipElse : Cond::KeepElse;
      continue;
    case SondeLexer::PP_CLOSE:
      if (!open)
        return errorToken(*t, "incomplete conditional - missing '%('", false, true);
      conds_.pop_back();
      continue;
    case SondeLexer::PP_OPEN:
      if (auto err = openConditional(*t))
        return err;
      continue;
    default: return t;
    }
  }
}

std::optional<LexToken> Preprocessor::skipBranch() {
  int nesting = 0;
  for (;;) {
    std::optional<LexToken> t = nextExpanded(/*ignoreDefines=*/true);
    if (!t)
      return std::nullopt;
    if (t->error)
      continue; // stap ignores errors inside an untaken branch
    if (t->type == SondeLexer::PP_OPEN)
      ++nesting;
    else if (nesting && t->type == SondeLexer::PP_CLOSE)
      --nesting;
    else if (!nesting && (t->type == SondeLexer::PP_ELSE || t->type == SondeLexer::PP_THEN ||
                          t->type == SondeLexer::PP_CLOSE))
      return t;
  }
}

std::optional<LexToken> Preprocessor::openConditional(const LexToken &open) {
  // On an error the tokens read so far are dropped and the rest flows on, as in
  // stap (so a stray %? or %) later gets its own error).
  bool result = false, andResult = true;
  for (;;) {
    std::optional<LexToken> l = nextExpanded(false);
    std::optional<LexToken> op = l ? nextExpanded(false) : std::nullopt;
    std::optional<LexToken> r = op ? nextExpanded(false) : std::nullopt;
    if (!r)
      return errorToken(open, "incomplete condition after '%('", false, true);
    std::optional<LexToken> err;
    bool value = evalTriple(*l, *op, *r, err);
    if (err)
      return err;
    andResult = andResult && value;
    std::optional<LexToken> n = nextExpanded(false);
    if (n && n->type == SondeLexer::ANDAND)
      continue;
    result = result || andResult;
    andResult = true;
    if (n && n->type == SondeLexer::OROR)
      continue;
    if (!n || n->type != SondeLexer::PP_THEN)
      return errorToken(open, "expected '%?' marker for conditional", false, true);
    break;
  }
  conds_.emplace_back(open, result ? Cond::KeepThen : Cond::SkipThen);
  return std::nullopt;
}

} // namespace sonde::parse
