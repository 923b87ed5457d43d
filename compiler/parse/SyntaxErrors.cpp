#include "parse/SyntaxErrors.h"

#include "SondeParser.h"

namespace sonde::parse {

using P = sonde_antlr::SondeParser;

void RecordingBailStrategy::reset(antlr4::Parser *recognizer) {
  error.reset();
  BailErrorStrategy::reset(recognizer);
}

void RecordingBailStrategy::reportError(antlr4::Parser *, const antlr4::RecognitionException &e) {
  if (error)
    return;
  error = SyntaxError{e.getOffendingToken(), e.getExpectedTokens(),
                      dynamic_cast<antlr4::ParserRuleContext *>(e.getCtx()),
                      &e.getRecognizer()->getVocabulary()};
}

antlr4::Token *RecordingBailStrategy::recoverInline(antlr4::Parser *recognizer) {
  if (!error)
    error = SyntaxError{recognizer->getCurrentToken(), recognizer->getExpectedTokens(),
                        recognizer->getContext(), &recognizer->getVocabulary()};
  return BailErrorStrategy::recoverInline(recognizer);
}

namespace {

bool has(const antlr4::misc::IntervalSet &e, size_t type) { return e.contains(type); }

bool inRule(const antlr4::ParserRuleContext *ctx, size_t rule) {
  return ctx && ctx->getRuleIndex() == rule;
}

size_t parentRule(const antlr4::ParserRuleContext *ctx) {
  auto *parent = ctx ? dynamic_cast<const antlr4::ParserRuleContext *>(ctx->parent) : nullptr;
  return parent ? parent->getRuleIndex() : static_cast<size_t>(-1);
}

// How stap names a token it expected; `quoted` wraps operators and keywords.
std::string expectedName(const antlr4::dfa::Vocabulary &v, size_t type, bool quoted) {
  switch (type) {
  case P::IDENTIFIER: return "identifier";
  case P::STRING: return "literal string";
  case P::NUMBER: return "number";
  default: {
    std::string lit = v.getLiteralName(type); // "')'"
    if (lit.size() >= 2 && !quoted)
      return lit.substr(1, lit.size() - 2);
    return lit.empty() ? v.getSymbolicName(type) : lit;
  }
  }
}

// What stap says where it would have parsed a statement.
std::string statementExpected(size_t offendingType) {
  if (offendingType == antlr4::Token::EOF ||
      (offendingType >= P::PROBE && offendingType <= P::CATCH))
    return "expected statement";
  return "expected literal string or number";
}

} // namespace

std::string syntaxMessage(const SyntaxError &err, size_t previousType) {
  const size_t type = err.offending->getType();
  const antlr4::misc::IntervalSet &e = err.expected;
  antlr4::ParserRuleContext *ctx = err.ctx;

  // `return` takes a value unless `;` or `}` follows.
  if (dynamic_cast<P::ReturnStatementContext *>(ctx))
    return type == antlr4::Token::EOF ? "expected ';', '}' or an expression statement"
                                      : "expected literal string or number";
  // The statement loop of a block: stap tries a statement whenever it does not
  // see '}'.
  if (inRule(ctx, P::RuleBlock) && has(e, P::RBRACE) && !has(e, P::LBRACE))
    return statementExpected(type);
  if (inRule(ctx, P::RuleStatement) || inRule(ctx, P::RuleSimpleStatement))
    if (has(e, P::IF) || has(e, P::RETURN))
      return statementExpected(type);
  // A probe point list ends with one of these.
  if ((inRule(ctx, P::RuleBlock) && parentRule(ctx) == P::RuleProbeDecl &&
       ctx->getStart() == err.offending) ||
      ((inRule(ctx, P::RulePpComponent) || inRule(ctx, P::RulePpPiece)) &&
       ctx->getStart() != err.offending))
    return "expected one of ', { } = +='";
  if (type == antlr4::Token::EOF)
    return "unexpected end-of-file";
  if (type == P::ATWORD) {
    const std::string word = err.offending->getText();
    if (dynamic_cast<P::ForeachStatementContext *>(ctx) || inRule(ctx, P::RuleForeachSort))
      return "expected statistical operation";
    if (word == "@const" || word == "@kregister" || word == "@kderef")
      return "embedded C is not supported"; // guru-only in stap; never in ours
    return "unknown operator " + word;
  }
  // Argument and index lists: right after '(' '[' or ',' an expression is due;
  // after an expression, the separator or the terminator.
  const bool valueDue =
      previousType == P::LPAREN || previousType == P::LBRACKET || previousType == P::COMMA;
  if (auto *name = dynamic_cast<P::NameValueContext *>(ctx); name && name->children.size() > 1) {
    if (valueDue)
      return "expected literal string or number";
    return name->LPAREN() ? "expected one of ') ,'" : "expected one of '] ,'";
  }
  if (inRule(ctx, P::RulePrintCall) && !valueDue)
    return "expected one of ', )'";
  if (dynamic_cast<P::HistValueContext *>(ctx))
    return valueDue ? "expected literal string or number" : "expected one of '] ,'";
  if (has(e, P::NUMBER) && has(e, P::IDENTIFIER)) {
    if (has(e, P::IF) && type >= P::PROBE && type <= P::CATCH)
      return "expected statement";
    return "expected literal string or number";
  }
  if (has(e, P::RPAREN) && e.size() == 1 && inRule(ctx, P::RuleFunctionRest))
    return "expected ',' or ')'";
  if (has(e, P::RBRACKET) && e.size() == 1)
    return "expected ',' or ']'";
  if (has(e, P::LONG) && has(e, P::STRING_KW) && !has(e, P::IDENTIFIER))
    return "expected 'string' or 'long'";
  if (inRule(ctx, P::RuleSortDir) || (has(e, P::PLUS) && has(e, P::MINUS) && e.size() == 2))
    return "expected sort directive";
  if (inRule(ctx, P::RuleStatWord) || inRule(ctx, P::RuleForeachSort))
    return "expected statistical operation";
  if (inRule(ctx, P::RulePpComponent) || inRule(ctx, P::RulePpPiece))
    return "expected identifier or '*' or '{'";
  if (inRule(ctx, P::RulePrivateDecl))
    return "expected 'function' or identifier";
  if (has(e, P::NUMBER) && (e.size() == 1 || (e.size() == 2 && has(e, P::MINUS))))
    return "expected number";
  if (inRule(ctx, P::RuleMemberName))
    return "expected identifier or keyword";
  if (has(e, P::IDENTIFIER))
    return "expected identifier";
  if (has(e, P::STRING) && has(e, P::NUMBER))
    return "expected literal string or number";
  if (e.size() == 1)
    return "expected " +
           expectedName(*err.vocabulary, static_cast<size_t>(e.getMinElement()), true);
  std::string msg = "expected one of";
  const char *sep = " '";
  for (ssize_t t : e.toList()) {
    msg += sep + expectedName(*err.vocabulary, static_cast<size_t>(t), false);
    sep = " ";
  }
  return msg + "'";
}

} // namespace sonde::parse
