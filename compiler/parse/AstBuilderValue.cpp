// Primary values: literals, symbols, calls, target variables and their suffixes,
// @-operators, statistics and histograms, and the print family.
#include "parse/AstBuilder.h"

#include "parse/FormatParser.h"

namespace sonde::parse {

using namespace sonde::ast;

StatFn AstBuilder::statFnOf(size_t tokenType) {
  switch (tokenType) {
  case P::AT_COUNT: return StatFn::Count;
  case P::AT_SUM: return StatFn::Sum;
  case P::AT_MIN: return StatFn::Min;
  case P::AT_MAX: return StatFn::Max;
  case P::AT_AVG: return StatFn::Avg;
  default: return StatFn::Variance;
  }
}

namespace {

// Splits a pretty-print suffix off a name: "$foo$$" -> ("$foo", 2).
std::pair<std::string, int> splitPretty(const std::string &name) {
  size_t last = name.find_last_not_of('$');
  if (last == std::string::npos)
    return {"", static_cast<int>(name.size())};
  return {name.substr(0, last + 1), static_cast<int>(name.size() - last - 1)};
}

// The target-ish fields shared by TargetSymbol, CastOp and AtVar.
struct TargetFields {
  std::vector<TargetComponent> *components;
  bool *addressOf;
  int *prettyDepth;
};

std::optional<TargetFields> targetFields(Expr &e) {
  if (auto *t = dynamic_cast<TargetSymbol *>(&e))
    return TargetFields{&t->components, &t->addressOf, &t->prettyDepth};
  if (auto *c = dynamic_cast<CastOp *>(&e))
    return TargetFields{&c->components, &c->addressOf, &c->prettyDepth};
  if (auto *a = dynamic_cast<AtVar *>(&e))
    return TargetFields{&a->components, &a->addressOf, &a->prettyDepth};
  return std::nullopt;
}

} // namespace

void AstBuilder::addTargetSuffixes(const std::vector<P::TargetSuffixContext *> &suffixes,
                                   std::vector<TargetComponent> &components, int &prettyDepth) {
  for (auto *s : suffixes) {
    if (prettyDepth)
      fail("-> and [ are not accepted for a pretty-printing variable", s->getStart(), true);
    TargetComponent c;
    c.tok = tok(s->getStart());
    if (s->DOLLARS()) {
      prettyDepth = static_cast<int>(s->DOLLARS()->getText().size());
      continue;
    }
    if (s->ARROW()) {
      auto [member, pretty] = splitPretty(s->memberName()->getText());
      if (!member.empty()) {
        c.kind = TargetComponent::Kind::Member;
        c.member = member;
        components.push_back(std::move(c));
      }
      prettyDepth = pretty;
      continue;
    }
    c.kind = TargetComponent::Kind::Index;
    c.index = dispatch(s->expr());
    components.push_back(std::move(c));
  }
}

ExprPtr AstBuilder::dwarfBase(P::DwarfBaseContext *ctx) {
  const antlr4::Token *first = ctx->getStart();
  switch (first->getType()) {
  case P::TARGET: {
    auto t = std::make_unique<TargetSymbol>(make<TargetSymbol>(first));
    auto [name, pretty] = splitPretty(t->tok.text);
    t->name = name;
    t->prettyDepth = pretty;
    return t;
  }
  case P::AT_CAST: {
    P::CastOpContext *c = ctx->castOp();
    auto n = std::make_unique<CastOp>(make<CastOp>(first));
    n->operand = dispatch(c->expr());
    n->typeName = stringValue(c->castType);
    if (n->typeName.empty())
      fail("expected non-empty string", c->castType->getStart(), true);
    if (c->module)
      n->module = stringValue(c->module);
    return n;
  }
  case P::AT_VAR: {
    P::AtVarOpContext *v = ctx->atVarOp();
    auto n = std::make_unique<AtVar>(make<AtVar>(first));
    n->varName = stringValue(v->varName);
    if (v->module)
      n->module = stringValue(v->module);
    return n;
  }
  default: return value(static_cast<P::ValueContext *>(ctx->children[0]));
  }
}

// '&'? dwarfBase targetSuffix*
ExprPtr AstBuilder::dwarfValue(P::DwarfValueContext *ctx) {
  const bool addressOf = ctx->getStart()->getType() == P::AMP;
  const size_t baseIndex = addressOf ? 1 : 0;
  ExprPtr e = dwarfBase(static_cast<P::DwarfBaseContext *>(ctx->children[baseIndex]));
  std::vector<P::TargetSuffixContext *> suffixes;
  for (size_t i = baseIndex + 1; i < ctx->children.size(); ++i)
    suffixes.push_back(static_cast<P::TargetSuffixContext *>(ctx->children[i]));
  if (!addressOf && suffixes.empty())
    return e;
  if (!targetFields(*e)) {
    // stap's autocast_op: suffixes on a plain value. We spell it as a CastOp
    // without a type name; pass 2 finds the type.
    auto n = std::make_unique<CastOp>(
        make<CastOp>(addressOf ? ctx->getStart() : suffixes.front()->getStart()));
    n->operand = std::move(e);
    e = std::move(n);
  }
  TargetFields f = *targetFields(*e);
  if (addressOf) {
    if (*f.addressOf)
      fail("cannot take address more than once", ctx->getStart(), false);
    *f.addressOf = true;
  }
  addTargetSuffixes(suffixes, *f.components, *f.prettyDepth);
  return e;
}

std::unique_ptr<HistOp> AstBuilder::histOp(P::HistOpContext *ctx) {
  auto h = std::make_unique<HistOp>(make<HistOp>(ctx->getStart()));
  h->linear = ctx->AT_HIST_LINEAR() != nullptr;
  h->operand = dispatch(ctx->expr());
  if (h->linear) {
    h->low = numberValue(ctx->number(0));
    h->high = numberValue(ctx->number(1));
    h->width = numberValue(ctx->number(2));
  }
  return h;
}

ExprPtr AstBuilder::statOp(P::StatValueContext *ctx) {
  const antlr4::Token *word = ctx->statWord()->getStart();
  auto n = std::make_unique<StatOp>(make<StatOp>(word));
  n->fn = statFnOf(word->getType());
  n->operand = dispatch(ctx->expr());
  const size_t maxParams = n->fn == StatFn::Variance ? 1 : 0;
  std::vector<P::NumberContext *> params = ctx->number();
  if (params.size() > maxParams)
    fail("not more than " + std::to_string(maxParams + 1) +
             (maxParams ? " parameters allowed" : " parameter allowed"),
         ctx->COMMA(maxParams), false);
  if (!params.empty())
    n->varianceShift = numberValue(params[0]);
  return n;
}

ExprPtr AstBuilder::value(P::ValueContext *ctx) {
  const antlr4::Token *first = ctx->getStart();
  auto &ch = ctx->children;
  auto sub = [&](size_t i) { return static_cast<antlr4::ParserRuleContext *>(ch[i]); };
  switch (first->getType()) {
  case P::NUMBER: return number(static_cast<antlr4::tree::TerminalNode *>(ch[0]));
  case P::STRING: return strings(static_cast<P::StringsContext *>(ch[0]));
  case P::LPAREN: return dispatch(sub(1));
  case P::IDENTIFIER: {
    const size_t second =
        ch.size() > 1 ? static_cast<antlr4::tree::TerminalNode *>(ch[1])->getSymbol()->getType()
                      : 0;
    if (second == P::LPAREN) { // IDENTIFIER '(' (expr (',' expr)*)? ')'
      auto n = std::make_unique<FunctionCall>(make<FunctionCall>(first));
      n->name = n->tok.text;
      for (size_t i = 2; i + 1 < ch.size(); i += 2)
        n->args.push_back(dispatch(sub(i)));
      return n;
    }
    if (second != P::LBRACKET)
      return symbol(first);
    // IDENTIFIER '[' indexOrStar (',' indexOrStar)* ']'
    auto n = std::make_unique<ArrayIndex>(make<ArrayIndex>(first));
    n->base = symbol(first);
    for (size_t i = 2; i + 1 < ch.size(); i += 2)
      n->indexes.push_back(indexOrStar(static_cast<P::IndexOrStarContext *>(ch[i])));
    return n;
  }
  case P::EMBEDDED: fail("embedded C is not supported", first, true);
  default: break;
  }
  if (first->getType() >= P::PRINT && first->getType() <= P::PRINT_CHAR)
    return printCall(static_cast<P::PrintCallContext *>(ch[0]));
  return atOperator(ctx);
}

// The @-operators: statistics, histograms, @defined, @entry, ...
ExprPtr AstBuilder::atOperator(P::ValueContext *ctx) {
  const antlr4::Token *first = ctx->getStart();
  switch (first->getType()) {
  case P::AT_HIST_LINEAR:
  case P::AT_HIST_LOG: {
    auto *v = static_cast<P::HistValueContext *>(ctx);
    std::unique_ptr<HistOp> h = histOp(v->histOp());
    if (!v->LBRACKET())
      fail("base histogram operator where expression expected", first, false);
    auto n = std::make_unique<ArrayIndex>(make<ArrayIndex>(first));
    n->hist = std::move(h);
    for (auto *i : v->indexOrStar())
      n->indexes.push_back(indexOrStar(i));
    return n;
  }
  case P::AT_DEFINED: {
    auto n = std::make_unique<DefinedOp>(make<DefinedOp>(first));
    n->operand = dispatch(static_cast<P::DefinedValueContext *>(ctx)->expr());
    return n;
  }
  case P::AT_ENTRY: {
    auto n = std::make_unique<EntryOp>(make<EntryOp>(first));
    n->operand = dispatch(static_cast<P::EntryValueContext *>(ctx)->expr());
    return n;
  }
  case P::AT_PROBEWRITE: {
    auto n = std::make_unique<ProbewriteOp>(make<ProbewriteOp>(first));
    n->var = symbol(static_cast<P::ProbewriteValueContext *>(ctx)->IDENTIFIER()->getSymbol());
    return n;
  }
  case P::AT_PERF: {
    auto *v = static_cast<P::PerfValueContext *>(ctx);
    auto n = std::make_unique<SpecialAtOp>(make<SpecialAtOp>(first));
    n->kind = SpecialAtOp::Kind::Perf;
    n->strings.push_back(stringValue(v->strings()));
    if (n->strings[0].empty())
      fail("expected non-empty string", v->RPAREN(), true);
    return n;
  }
  case P::AT_ENUM: {
    auto n = std::make_unique<SpecialAtOp>(make<SpecialAtOp>(first));
    n->kind = SpecialAtOp::Kind::Enum;
    n->strings.push_back(stringValue(static_cast<P::EnumValueContext *>(ctx)->strings()));
    return n;
  }
  case P::AT_ENUMNAME: {
    auto *v = static_cast<P::EnumNameValueContext *>(ctx);
    auto n = std::make_unique<SpecialAtOp>(make<SpecialAtOp>(first));
    n->kind = SpecialAtOp::Kind::EnumName;
    n->operand = dispatch(v->expr());
    for (auto *s : v->strings())
      n->strings.push_back(stringValue(s));
    return n;
  }
  default: // @count, @sum, ...
    return statOp(static_cast<P::StatValueContext *>(ctx));
  }
}

namespace {

// The histogram of `print(@hist_log(x))`: the argument is exactly a bare
// histogram operator (no index, no operators around it).
AstBuilder::P::HistValueContext *bareHistogram(AstBuilder::P::ExprContext *arg) {
  antlr4::tree::ParseTree *node = arg;
  while (auto *r = dynamic_cast<antlr4::ParserRuleContext *>(node)) {
    if (auto *h = dynamic_cast<AstBuilder::P::HistValueContext *>(r))
      return h->LBRACKET() ? nullptr : h;
    if (r->children.size() != 1)
      return nullptr;
    node = r->children[0];
  }
  return nullptr;
}

PrintKind printKindOf(size_t type) {
  using P = AstBuilder::P;
  switch (type) {
  case P::PRINT: return PrintKind::Print;
  case P::PRINTLN: return PrintKind::Println;
  case P::SPRINT: return PrintKind::Sprint;
  case P::SPRINTLN: return PrintKind::Sprintln;
  case P::PRINTF: return PrintKind::Printf;
  case P::SPRINTF: return PrintKind::Sprintf;
  case P::PRINTD: return PrintKind::Printd;
  case P::PRINTDLN: return PrintKind::Printdln;
  case P::SPRINTD: return PrintKind::Sprintd;
  case P::SPRINTDLN: return PrintKind::Sprintdln;
  default: return PrintKind::PrintChar;
  }
}

} // namespace

ExprPtr AstBuilder::printCall(P::PrintCallContext *ctx) {
  const antlr4::Token *name = ctx->getStart();
  auto n = std::make_unique<PrintFormat>(make<PrintFormat>(name));
  n->kind = printKindOf(name->getType());
  std::vector<P::ExprContext *> args = ctx->expr();
  if (ctx->formatPrint()) {
    n->format = stringValue(ctx->strings());
    FormatParse parsed = parseFormat(n->format);
    if (!parsed.error.empty())
      fail(parsed.error, after(ctx->strings()), true);
    n->components = std::move(parsed.components);
    for (const auto &conv : parsed.beyondStap)
      diags_.warning("print format conversion '" + conv +
                         "' combines flags or 'll', which stap rejects",
                     n->tok);
  } else if (ctx->delimPrint()) {
    n->format = stringValue(ctx->strings());
  } else if (ctx->plainPrint()) {
    if (args.empty() && (n->kind == PrintKind::Print || n->kind == PrintKind::Sprint))
      fail("expected literal string or number", ctx->getStop(), true);
    if (!args.empty()) {
      if (P::HistValueContext *h = bareHistogram(args[0])) {
        if (args.size() > 1)
          fail("expected ')'", ctx->COMMA(0), true);
        n->hist = histOp(h->histOp());
        return n;
      }
    }
  }
  for (auto *a : args)
    n->args.push_back(dispatch(a));
  return n;
}

} // namespace sonde::parse
