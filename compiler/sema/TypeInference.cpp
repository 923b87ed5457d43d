#include "sema/TypeInference.h"

#include "sema/TypeInferencePass.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace sonde::sema {

void inferTypes(ast::Script &script, SemaDiagnostics &diags) {
  types::TypeInferencePass(script, diags).run();
}

namespace types {

namespace {

std::string name(Type t) { return ast::typeName(t); }

// Literals know their type before inference starts, as in stap's parser, so
// `x = "a"` types x on the first pass.
class LiteralTyper : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  void visit(ast::NumberLit &n) override { n.type = L; }
  void visit(ast::StringLit &n) override { n.type = S; }
};

} // namespace

TypeInferencePass::TypeInferencePass(ast::Script &script, SemaDiagnostics &diags)
    : script_(script), diags_(diags) {
  for (auto &f : script.functions)
    for (size_t i = 0; i < f->params.size() && i < f->locals.size(); ++i)
      paramIndex_[f->locals[i].get()] = static_cast<int>(i);
}

void TypeInferencePass::run() {
  LiteralTyper literals;
  for (auto &f : script_.functions)
    if (f->body)
      f->body->accept(literals);
  for (auto &p : script_.derived) {
    if (p->body)
      p->body->accept(literals);
    if (p->condition)
      p->condition->accept(literals);
  }
  for (;; firstPass_ = false) {
    newlyResolved_ = 0;
    stillUnresolved_ = 0;
    pass();
    if (newlyResolved_ > 0)
      continue;
    if (stillUnresolved_ == 0 || final_)
      break;
    final_ = true; // one more pass, this time reporting what is left
  }
  flushReports();
}

void TypeInferencePass::pass() {
  for (auto &f : script_.functions) {
    // As in stap, a function whose parameters are still untyped waits for its
    // callers on the first pass, so parameter types come from the calls.
    if (firstPass_ && std::any_of(f->locals.begin(), f->locals.end(),
                                  [](const auto &l) { return l->isParam && l->type == U; })) {
      ++newlyResolved_; // not converged: the body is still to be seen
      continue;
    }
    fn_ = f.get();
    visitBody(f.get(), [&] {
      t_ = U;
      if (f->body)
        f->body->accept(*this);
      for (auto &l : f->locals)
        checkLocal(*l);
    });
  }
  fn_ = nullptr;
  for (auto &p : script_.derived)
    visitBody(p.get(), [&] {
      t_ = U;
      if (p->body)
        p->body->accept(*this);
      for (auto &l : p->locals)
        checkLocal(*l);
      if (p->condition)
        expr(*p->condition, L);
    });
  for (auto &g : script_.globals)
    if (g->type == U)
      unresolved(g->tok);
}

// A body whose every expression and local is typed, with nothing wrong, can
// change nothing more: later passes skip it until the reporting pass. This
// keeps long call chains, which need a pass per link, from going quadratic.
void TypeInferencePass::visitBody(const void *body, const std::function<void()> &visit) {
  if (!final_ && complete_.count(body))
    return;
  size_t unknown = unknownLeft_, still = stillUnresolved_;
  visit();
  if (unknownLeft_ == unknown && stillUnresolved_ == still)
    complete_.insert(body);
}

// ------------------------------------------------------------------ helpers

void TypeInferencePass::literal(ast::Expr &e, Type own) {
  e.type = own;
  if (t_ != U && t_ != own)
    mismatch(e.tok, t_, own);
}

void TypeInferencePass::fixed(ast::Expr &e, Type own) {
  if (e.type != own)
    setType(e, own);
  if (t_ != U && t_ != own)
    mismatch(e.tok, t_, own);
}

void TypeInferencePass::numeric(ast::Expr &e, ast::Expr &lhs, ast::Expr &rhs) {
  if (t_ == ST || t_ == S)
    invalid(e.tok, t_);
  expr(lhs, L);
  expr(rhs, L);
  if (lhs.type != U && rhs.type != U && lhs.type != rhs.type)
    mismatchSides(e, lhs.type, rhs.type);
  if (e.type == U)
    setType(e, L);
}

void TypeInferencePass::concatenation(ast::Expr &e, ast::Expr &lhs, ast::Expr &rhs) {
  if (t_ != U && t_ != S)
    invalid(e.tok, t_);
  expr(lhs, S);
  expr(rhs, S);
  if (e.type == U)
    setType(e, S);
}

void TypeInferencePass::unary(ast::Expr &e, ast::Expr &operand) {
  if (t_ == ST || t_ == S)
    invalid(e.tok, t_);
  expr(operand, L);
  if (e.type == U)
    setType(e, L);
}

void TypeInferencePass::checkArg(Type wanted, ast::Expr &arg) {
  expr(arg, wanted);
  if (arg.type == U) {
    // A call of a function without a value stays unknown: "unresolved type".
    auto *call = dynamic_cast<ast::FunctionCall *>(&arg);
    if (call && call->callees.empty())
      return;
    setType(arg, wanted);
  } else if (arg.type != wanted) {
    mismatch(arg.tok, wanted, arg.type);
  }
}

// Unifies an expression's type with its declaration's and with what the
// context expects, in whichever direction something is known.
void TypeInferencePass::resolveBoth(ast::Expr &referrer, Slot slot, Type t, bool acceptUnknown) {
  for (;;) {
    Type re = referrer.type, te = *slot.type;
    if (t != U && re == t && re == te)
      return;
    if (t == U && re != U && re == te)
      return;
    if (re != U && te != U && re != te)
      return mismatchDecl(referrer.tok, re, slot);
    if (re != U && t != U && re != t)
      return mismatchDecl(referrer.tok, t, slot);
    if (te != U && t != U && te != t)
      return mismatchDecl(referrer.tok, t, slot);
    if (re == U && t != U) {
      referrer.type = t;
      resolved(referrer.tok, t, nullptr);
    } else if (re == U && te != U) {
      referrer.type = te;
      resolved(referrer.tok, te, nullptr);
    } else if (re != U && te == U) {
      *slot.type = re;
      resolved(referrer.tok, re, &slot);
    } else {
      if (!acceptUnknown)
        unresolved(referrer.tok);
      return;
    }
  }
}

void TypeInferencePass::resolveIndex(ast::Expr *index, ast::GlobalDecl &g, size_t i) {
  if (!index || i >= g.indexTypes.size())
    return;
  Slot slot = indexSlot(g, i);
  expr(*index, *slot.type);
  Type at = index->type;
  if ((at == S || at == L) && *slot.type == U) {
    *slot.type = at;
    resolved(index->tok, at, &slot);
  }
  if (at == ST)
    invalid(index->tok, at);
  if (*slot.type == ST)
    invalid(index->tok, ST);
  if (at != U && *slot.type != U && *slot.type != at)
    mismatchDecl(index->tok, at, slot);
  if (at == U)
    unresolved(index->tok);
}

void TypeInferencePass::resolveParam(ast::Expr &arg, ast::FunctionDecl &f, size_t i) {
  ast::LocalVar &p = *f.locals[i];
  Slot slot{&p.type, &p, static_cast<int>(i)};
  expr(arg, p.type);
  Type at = arg.type;
  if ((at == S || at == L) && p.type == U) {
    p.type = at;
    resolved(arg.tok, at, &slot);
  }
  if (at == ST)
    invalid(arg.tok, at);
  if (p.type == ST)
    invalid(p.tok, ST);
  if (at != U && p.type != U && p.type != at)
    mismatchDecl(arg.tok, at, slot);
  if (at == U)
    unresolved(arg.tok);
}

void TypeInferencePass::checkLocal(ast::LocalVar &l) {
  if (l.isParam)
    return; // parameters take their types from calls; an unused one is fine
  if (l.type == U) {
    unresolved(l.tok);
  } else if (l.type == ST) {
    ++stillUnresolved_;
    if (final_)
      report(kAlways, SemaDiagnostics::note(
                          "stat locals not supported, missing global declaration? ", l.tok));
  }
}

// ------------------------------------------------------------- diagnostics

void TypeInferencePass::resolved(const Token &tok, Type t, const Slot *slot) {
  ++newlyResolved_;
  if (!slot)
    return;
  firstInferred_.try_emplace(SlotKey{slot->decl, slot->index}, tok);
  if (slot->global && !slot->global->typeTok.loc.valid() && t != U)
    slot->global->typeTok = tok;
}

// At one token only the most specific mismatch is worth showing (a
// declaration's over an expected type's), and operands that disagree only when
// nothing more specific went wrong. Unresolved types are mostly fallout: none
// are shown next to a mismatch, and only the first otherwise, as stap does.
void TypeInferencePass::flushReports() {
  auto where = [](const Diagnostic &d) {
    const SourceLoc &l = d.tok ? d.tok->loc : SourceLoc{};
    return std::make_tuple(static_cast<const void *>(l.file), l.line, l.col);
  };
  std::map<std::tuple<const void *, uint32_t, uint32_t>, int> best;
  for (const auto &[kind, d] : reports_)
    if (kind >= kSides) {
      int &b = best[where(d)];
      b = std::max(b, kind);
    }
  bool unresolvedShown = !best.empty();
  bool specific = std::any_of(best.begin(), best.end(),
                              [](const auto &entry) { return entry.second > kSides; });
  for (auto &[kind, d] : reports_) {
    if (kind == kSides && specific)
      continue;
    if (kind == kUnresolved) {
      if (!unresolvedShown)
        diags_.error(std::move(d));
      unresolvedShown = true;
    } else if (kind == kAlways || kind == best[where(d)]) {
      diags_.error(std::move(d));
    }
  }
  reports_.clear();
}

void TypeInferencePass::unresolved(const Token &tok) {
  ++stillUnresolved_;
  if (final_)
    report(kUnresolved, SemaDiagnostics::note("unresolved type ", tok));
}

void TypeInferencePass::invalid(const Token &tok, Type t) {
  ++stillUnresolved_;
  if (!final_)
    return; // only the last pass reports, so only it builds the notes
  report(kAlways,
         SemaDiagnostics::note(tok.kind == TokenKind::Operator ? std::string("invalid operator")
                                                               : "invalid type " + name(t),
                               tok));
}

void TypeInferencePass::mismatch(const Token &tok, Type expected, Type found) {
  ++stillUnresolved_;
  if (!final_)
    return;
  std::string msg = "type mismatch: expected " + name(expected);
  if (found != U)
    msg += " but found " + name(found);
  report(kExpected, SemaDiagnostics::note(msg, tok));
}

void TypeInferencePass::mismatchSides(const ast::Expr &e, Type l, Type r) {
  ++stillUnresolved_;
  if (!final_)
    return;
  report(kSides, SemaDiagnostics::note("type mismatch: left and right sides don't agree (" +
                                           name(l) + " vs " + name(r) + ")",
                                       e.tok));
}

// A use disagrees with its declaration's type: name where that type came from.
void TypeInferencePass::mismatchDecl(const Token &tok, Type t, const Slot &slot) {
  ++stillUnresolved_;
  if (!final_)
    return;
  // A parameter is named by its position, and its type's origin is the call
  // that first gave it one.
  int index = slot.index;
  if (index < 0)
    if (auto it = paramIndex_.find(static_cast<const ast::LocalVar *>(slot.decl));
        it != paramIndex_.end())
      index = it->second;
  auto first = firstInferred_.find(SlotKey{slot.decl, index});
  if (first == firstInferred_.end()) {
    // Declared types (x:long, global x = 1) have no inference site to show.
    report(kDecl,
           SemaDiagnostics::note(
               "type mismatch: expected " + name(*slot.type) + " but found " + name(t), tok));
    return;
  }
  std::string at = index >= 0 ? "index " + std::to_string(index) + " " : "";
  std::string of = index >= 0 ? " of index " + std::to_string(index) : "";
  Diagnostic d = SemaDiagnostics::note(at + "type mismatch (" + name(t) + ")", tok);
  d.chain.push_back(SemaDiagnostics::note(
      "type" + of + " was first inferred here (" + name(*slot.type) + ")", first->second));
  report(kDecl, std::move(d));
}

} // namespace types
} // namespace sonde::sema
