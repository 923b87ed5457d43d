#include "parse/Parser.h"

#include "parse/AstBuilder.h"
#include "parse/GreedyPrediction.h"
#include "parse/Lexer.h"
#include "parse/Preprocessor.h"
#include "parse/SyntaxErrors.h"

#include "SondeLexer.h"
#include "SondeParser.h"
#include "antlr4-runtime.h"

#include <algorithm>

namespace sonde {

namespace parse {
namespace {

using P = sonde_antlr::SondeParser;

// Deep enough for any real script, shallow enough for the stack the compiler
// runs on (driver/CompilerStack.h): a nesting level is some twenty ANTLR rule
// frames, a level of AST depth one frame of each later pass.
constexpr size_t kMaxNesting = 1000;
constexpr size_t kMaxDepth = 10000;

bool isDeclStart(size_t type) {
  return type == P::PROBE || type == P::GLOBAL || type == P::PRIVATE || type == P::FUNCTION ||
         type == P::EMBEDDED;
}

// Drives the ANTLR parser one top-level declaration at a time over the
// preprocessed tokens and resynchronises after errors like stap: skip to the
// next `probe`, `global`, `private`, `function` or `%{`.
class ScriptParser {
public:
  ScriptParser(const SourceFile &file, std::vector<LexToken> tokens, DiagnosticEngine &diags,
               ast::Script &script)
      : file_(file), tokens_(std::move(tokens)), diags_(diags), script_(script) {}

  void run();

private:
  void report(const DeferredError &e);
  size_t resync(size_t from);
  // Parses the declaration starting at token `pos`: SLL prediction first, full
  // LL only if that fails. On failure reports the error and returns null with
  // `errorIndex` set.
  P::TopLevelContext *parseOne(P &parser, antlr4::CommonTokenStream &stream,
                               RecordingBailStrategy &strategy, size_t pos, size_t &errorIndex);

  const SourceFile &file_;
  std::vector<LexToken> tokens_;
  DiagnosticEngine &diags_;
  ast::Script &script_;
};

void ScriptParser::report(const DeferredError &e) { reportDeferredError(e, diags_); }

size_t ScriptParser::resync(size_t from) {
  size_t i = from;
  for (; tokens_[i].type != antlr4::Token::EOF && !isDeclStart(tokens_[i].type); ++i)
    if (tokens_[i].error && tokens_[i].error->reportWhenSkipped)
      report(*tokens_[i].error);
  return i;
}

P::TopLevelContext *ScriptParser::parseOne(P &parser, antlr4::CommonTokenStream &stream,
                                           RecordingBailStrategy &strategy, size_t pos,
                                           size_t &errorIndex) {
  for (auto mode : {antlr4::atn::PredictionMode::SLL, antlr4::atn::PredictionMode::LL}) {
    parser.reset(); // frees the previous declaration's parse tree
    stream.seek(pos);
    parser.nesting = 0;
    parser.depth = 0;
    parser.tooDeep = nullptr;
    parser.tooDeepChain = false;
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(mode);
    try {
      return parser.topLevel();
    } catch (antlr4::ParseCancellationException &) {
      if (parser.tooDeep) {
        errorIndex = parser.tooDeep->getTokenIndex();
        diags_.parseError(parser.tooDeepChain
                              ? "too many chained operators and nested expressions (limit " +
                                    std::to_string(kMaxDepth) + ")"
                              : "too many nested expressions or statements (limit " +
                                    std::to_string(kMaxNesting) + ")",
                          diagToken(tokens_[errorIndex]), true);
        return nullptr;
      }
    } catch (const std::exception &e) {
      // The runtime failing in some other way must not take the compiler down.
      errorIndex = parser.getCurrentToken()->getTokenIndex();
      diags_.parseError(std::string("internal parser error: ") + e.what(),
                        diagToken(tokens_[errorIndex]), true);
      return nullptr;
    }
  }
  if (!strategy.error) { // a cancelled parse always records why; be safe anyway
    errorIndex = pos;
    diags_.parseError("syntax error", diagToken(tokens_[pos]), true);
    return nullptr;
  }
  errorIndex = strategy.error->offending->getTokenIndex();
  const LexToken &offending = tokens_[errorIndex];
  if (offending.error) {
    report(*offending.error);
    ++errorIndex; // consumed, like stap's lexer junk
  } else {
    size_t previous = errorIndex > 0 ? tokens_[errorIndex - 1].type : antlr4::Token::EOF;
    diags_.parseError(syntaxMessage(*strategy.error, previous), diagToken(offending), true);
  }
  return nullptr;
}

void ScriptParser::run() {
  std::vector<bool> glued(tokens_.size(), false);
  std::vector<std::unique_ptr<antlr4::Token>> list;
  list.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const LexToken &t = tokens_[i];
    // A library macro's tokens carry offsets into another file.
    glued[i] = i > 0 && t.loc.file == tokens_[i - 1].loc.file &&
               t.origin == tokens_[i - 1].origin && t.begin == tokens_[i - 1].end;
    auto ct = std::make_unique<antlr4::CommonToken>(t.type, t.text);
    ct->setLine(t.loc.line);
    ct->setCharPositionInLine(t.loc.col ? t.loc.col - 1 : 0);
    list.push_back(std::move(ct));
  }
  antlr4::ListTokenSource source(std::move(list), file_.name);
  antlr4::CommonTokenStream stream(&source);
  stream.fill();
  P parser(&stream);
  GreedyPrediction::install(parser);
  parser.removeErrorListeners();
  auto strategy = std::make_shared<RecordingBailStrategy>();
  parser.setErrorHandler(strategy);
  parser.glued = &glued;
  parser.maxNesting = kMaxNesting;
  parser.maxDepth = kMaxDepth;
  AstBuilder builder(file_, tokens_, script_, diags_);

  size_t pos = 0;
  while (tokens_[pos].type != antlr4::Token::EOF) {
    const LexToken &t = tokens_[pos];
    if (t.error) {
      report(*t.error);
      pos = resync(pos + 1);
      continue;
    }
    if (!isDeclStart(t.type)) {
      diags_.parseError("expected 'probe', 'global', 'private', 'function', or '%{'", diagToken(t),
                        true);
      pos = resync(pos + 1);
      continue;
    }
    size_t errorIndex = pos;
    P::TopLevelContext *ctx = parseOne(parser, stream, *strategy, pos, errorIndex);
    if (!ctx) {
      pos = resync(std::max(errorIndex, pos + 1));
      continue;
    }
    try {
      builder.build(ctx);
      pos = ctx->getStop()->getTokenIndex() + 1;
    } catch (const BuildError &e) {
      diags_.parseError(e.message, e.tok, e.sawStyle);
      // An embedded-code token would restart a declaration; it has had its error.
      size_t from = e.tokenIndex + (tokens_[e.tokenIndex].type == P::EMBEDDED);
      pos = resync(std::max(from, pos + 1));
    }
  }
}

// stap warns about arguments the script never mentions, unless the script
// reads them through argv or argc (its own globals, or the argv tapset's).
void warnUnusedArguments(const std::vector<bool> &used, bool namesArgv, const ast::Script &script,
                         size_t firstGlobal, DiagnosticEngine &diags) {
  if (namesArgv)
    return;
  for (size_t i = firstGlobal; i < script.globals.size(); ++i)
    if (script.globals[i]->name == "argv" || script.globals[i]->name == "argc")
      return;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      diags.warning("unused command line option $" + std::to_string(i + 1) + "/@" +
                    std::to_string(i + 1));
}

bool namesArgv(const std::vector<LexToken> &tokens) {
  return std::any_of(tokens.begin(), tokens.end(), [](const LexToken &t) {
    return t.type == sonde_antlr::SondeLexer::IDENTIFIER && (t.text == "argv" || t.text == "argc");
  });
}

} // namespace
} // namespace parse

bool parseScript(const SourceFile &file, const ParseOptions &opts, DiagnosticEngine &diags,
                 ast::Script &script) {
  const size_t errorsBefore = diags.parseErrors();
  std::vector<parse::LexToken> lexed = parse::lexFile(file);
  const bool sawTokens = lexed.size() > 1;
  parse::Preprocessor pp(opts, diags);
  std::vector<parse::LexToken> tokens = pp.run(std::move(lexed));
  if (tokens.size() == 1) {
    if (file.isLibrary)
      return true;
    diags.parseError("Input file '" + file.name + "' is empty" +
                     (sawTokens ? " after preprocessing." : "."));
    return false;
  }
  const size_t globalsBefore = script.globals.size();
  const bool namesArgv = parse::namesArgv(tokens);
  parse::ScriptParser(file, std::move(tokens), diags, script).run();
  if (!file.isLibrary)
    parse::warnUnusedArguments(pp.usedArgs(), namesArgv, script, globalsBefore, diags);
  return diags.parseErrors() == errorsBefore;
}

} // namespace sonde
