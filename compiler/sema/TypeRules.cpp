// The constraint each construct imposes on the types around it (language.md
// §3, in the order stap's typeresolution_info applies them).
#include "sema/TypeInferencePass.h"

#include "sema/Builtins.h"

namespace sonde::sema::types {

// ------------------------------------------------------------------ simple

void TypeInferencePass::visit(ast::Block &b) {
  for (auto &s : b.stmts) {
    t_ = U;
    s->accept(*this);
  }
}

void TypeInferencePass::visit(ast::ExprStmt &s) { expr(*s.expr, U); }

void TypeInferencePass::visit(ast::IfStmt &s) {
  expr(*s.cond, L);
  stmt(s.thenStmt);
  stmt(s.elseStmt);
}

void TypeInferencePass::visit(ast::WhileStmt &s) {
  expr(*s.cond, L);
  stmt(s.body);
}

void TypeInferencePass::visit(ast::ForStmt &s) {
  if (s.init)
    expr(*s.init, U);
  if (s.cond)
    expr(*s.cond, L);
  if (s.incr)
    expr(*s.incr, U);
  stmt(s.body);
}

void TypeInferencePass::visit(ast::NumberLit &e) { literal(e, L); }
void TypeInferencePass::visit(ast::StringLit &e) { literal(e, S); }

void TypeInferencePass::visit(ast::BinaryExpr &e) {
  if (e.op == ast::BinaryOp::Concat)
    concatenation(e, *e.lhs, *e.rhs);
  else
    numeric(e, *e.lhs, *e.rhs);
}

void TypeInferencePass::visit(ast::LogicalExpr &e) { numeric(e, *e.lhs, *e.rhs); }
void TypeInferencePass::visit(ast::UnaryExpr &e) { unary(e, *e.operand); }
void TypeInferencePass::visit(ast::IncDecExpr &e) { unary(e, *e.operand); }

void TypeInferencePass::visit(ast::HistOp &e) {
  if (e.operand)
    expr(*e.operand, ST);
}

void TypeInferencePass::visit(ast::TargetSymbol &e) {
  for (auto &c : e.components)
    if (c.index)
      expr(*c.index, L);
  fixed(e, e.type == U ? L : e.type); // name resolution typed it through its family
}

// Name resolution already reported these; typing them stops follow-on errors.
void TypeInferencePass::visit(ast::CastOp &e) { fixed(e, L); }
void TypeInferencePass::visit(ast::AtVar &e) { fixed(e, L); }
// @entry(e) is e's value saved when the probed call began: e's type.
void TypeInferencePass::visit(ast::EntryOp &e) {
  if (!e.operand)
    return fixed(e, L);
  expr(*e.operand, t_);
  if (e.operand->type != U && e.type != e.operand->type)
    setType(e, e.operand->type);
}
void TypeInferencePass::visit(ast::ProbewriteOp &e) { fixed(e, L); }

void TypeInferencePass::visit(ast::DefinedOp &e) {
  if (e.operand) {
    Type saved = t_;
    bool wasFinal = final_;
    final_ = false; // @defined only asks; its operand may stay unknown
    expr(*e.operand, U);
    final_ = wasFinal;
    t_ = saved;
  }
  fixed(e, L);
}

void TypeInferencePass::visit(ast::SpecialAtOp &e) {
  if (e.operand)
    expr(*e.operand, L);
  fixed(e, e.kind == ast::SpecialAtOp::Kind::EnumName ? S : L);
}

// -------------------------------------------------------------- statements

void TypeInferencePass::visit(ast::ForeachStmt &s) {
  Type wanted = U;
  if (s.hist) {
    if (s.keys.size() != 1)
      unresolved(s.tok);
    for (auto &k : s.keys) {
      expr(*k, L);
      if (k->type != L)
        unresolved(s.tok);
    }
    visit(*s.hist);
    wanted = L;
  } else if (s.base && s.base->global) {
    ast::GlobalDecl &g = *s.base->global;
    if (s.keys.size() != g.indexTypes.size()) {
      unresolved(s.tok);
    } else {
      for (size_t i = 0; i < s.keys.size(); ++i)
        resolveIndex(s.keys[i].get(), g, i);
      for (size_t i = 0; i < s.slice.size() && i < g.indexTypes.size(); ++i)
        resolveIndex(s.slice[i].get(), g, i);
    }
    expr(*s.base, U);
    wanted = s.base->type;
  }
  if (s.limit)
    expr(*s.limit, L);
  // stap 4.8 types the loop body before the value variable, which decides
  // where a conflict over the value's type is reported.
  stmt(s.body);
  if (s.value) {
    if (wanted == ST) {
      invalid(s.value->tok, wanted);
    } else if (wanted != U) {
      checkArg(wanted, *s.value);
    } else {
      expr(*s.value, U);
    }
  }
  // @sum etc. sort only aggregates.
  if (wanted != U && s.sortAggregate && wanted != ST && s.base)
    invalid(s.base->tok, wanted);
}

void TypeInferencePass::visit(ast::TryStmt &s) {
  if (s.tryBlock)
    s.tryBlock->accept(*this);
  if (s.catchVar) {
    ast::Symbol &v = *s.catchVar;
    if (v.type == U)
      setType(v, S);
    else if (v.type != S)
      mismatch(v.tok, S, v.type);
    if (v.local) {
      Slot slot = valueSlot(*v.local);
      if (*slot.type == U) {
        *slot.type = S;
        resolved(v.local->tok, S, &slot);
      } else if (*slot.type != S) {
        mismatchDecl(v.local->tok, S, slot);
      }
    }
    expr(v, S);
  }
  if (s.catchBlock)
    s.catchBlock->accept(*this);
}

void TypeInferencePass::visit(ast::ReturnStmt &s) {
  if (!fn_)
    return; // reported by name resolution
  Slot slot = returnSlot(*fn_);
  if (!s.value) {
    if (fn_->returnType != U)
      mismatchDecl(s.tok, U, slot);
    return;
  }
  expr(*s.value, fn_->returnType);
  Type vt = s.value->type;
  if (fn_->returnType != U && vt != U && fn_->returnType != vt)
    mismatchDecl(s.value->tok, vt, slot);
  if (fn_->returnType == U && (vt == L || vt == S)) {
    fn_->returnType = vt;
    resolved(s.value->tok, vt, &slot);
  }
  if (vt == ST)
    invalid(s.value->tok, vt);
}

void TypeInferencePass::visit(ast::DeleteStmt &s) {
  if (auto *a = dynamic_cast<ast::ArrayIndex *>(s.target.get())) {
    expr(*a, U);
  } else if (auto *sym = dynamic_cast<ast::Symbol *>(s.target.get())) {
    if (sym->global)
      resolveBoth(*sym, valueSlot(*sym->global), U);
    else if (sym->local)
      resolveBoth(*sym, valueSlot(*sym->local), U);
  }
}

// ------------------------------------------------------------- expressions

// An operand that names something (a variable, element or call) takes the
// other side's type; one whose type is its own (a literal, an operation) is
// left alone, so `(1 + 2) == ("a" . "b")` is one "sides don't agree" error.
static bool takesTypeFromPeer(const ast::Expr &e) {
  return dynamic_cast<const ast::Symbol *>(&e) || dynamic_cast<const ast::ArrayIndex *>(&e) ||
         dynamic_cast<const ast::FunctionCall *>(&e) ||
         dynamic_cast<const ast::TernaryExpr *>(&e) || dynamic_cast<const ast::AssignExpr *>(&e);
}

void TypeInferencePass::visit(ast::CompareExpr &e) {
  if (t_ == ST || t_ == S)
    invalid(e.tok, t_);
  expr(*e.lhs, takesTypeFromPeer(*e.lhs) ? e.rhs->type : U);
  expr(*e.rhs, takesTypeFromPeer(*e.rhs) ? e.lhs->type : U);
  if (e.lhs->type != U && e.rhs->type != U && e.lhs->type != e.rhs->type)
    mismatchSides(e, e.lhs->type, e.rhs->type);
  if (e.type == U)
    setType(e, L);
}

void TypeInferencePass::visit(ast::RegexMatch &e) {
  if (t_ == ST || t_ == S)
    invalid(e.tok, t_);
  expr(*e.lhs, S);
  if (e.type == U)
    setType(e, L);
}

void TypeInferencePass::visit(ast::TernaryExpr &e) {
  Type sub = t_;
  expr(*e.cond, L);
  if (sub == U && e.type != U)
    sub = e.type;
  expr(*e.thenExpr, sub);
  expr(*e.elseExpr, sub);
  if (sub == U && e.type != U)
    return;
  if (sub != U && e.type == U)
    setType(e, sub);
  else if (sub == U && e.thenExpr->type != U)
    setType(e, e.thenExpr->type);
  else if (sub == U && e.elseExpr->type != U)
    setType(e, e.elseExpr->type);
  else if (e.type != sub)
    mismatch(e.tok, sub, e.type);
}

void TypeInferencePass::visit(ast::AssignExpr &e) {
  if (t_ == ST)
    invalid(e.tok, t_);
  switch (e.op) {
  case ast::AssignOp::Accumulate:
    if (t_ == S)
      invalid(e.tok, t_);
    expr(*e.lhs, ST);
    expr(*e.rhs, L);
    if (e.type == U || e.type == ST)
      setType(e, L);
    return;
  default: break;
  }
  if (e.lhs->type == ST)
    return invalid(e.lhs->tok, ST);
  if (e.rhs->type == ST)
    return invalid(e.rhs->tok, ST);
  switch (e.op) {
  case ast::AssignOp::ConcatAssign:
    if (t_ == L)
      invalid(e.tok, t_);
    expr(*e.lhs, S);
    expr(*e.rhs, S);
    if (e.type == U)
      setType(e, S);
    return;
  case ast::AssignOp::Assign: {
    Type sub = t_;
    if (sub == U && e.type != U)
      sub = e.type;
    expr(*e.lhs, sub != U ? sub : e.rhs->type);
    expr(*e.rhs, sub != U ? sub : e.lhs->type);
    if (sub != U && e.type == U)
      setType(e, sub);
    if (sub == U && e.lhs->type != U && e.type != e.lhs->type)
      setType(e, e.lhs->type);
    if (e.lhs->type != U && e.rhs->type != U && e.lhs->type != e.rhs->type)
      mismatchSides(e, e.lhs->type, e.rhs->type);
    return;
  }
  default: // the arithmetic and bitwise compound assignments
    numeric(e, *e.lhs, *e.rhs);
    return;
  }
}

void TypeInferencePass::visit(ast::Symbol &e) {
  if (e.global)
    resolveBoth(e, valueSlot(*e.global), t_);
  else if (e.local)
    resolveBoth(e, valueSlot(*e.local), t_);
  // An unresolved name was reported by name resolution (or sits in @defined).
}

void TypeInferencePass::visit(ast::ArrayIndex &e) {
  if (e.hist) {
    if (e.indexes.size() != 1)
      unresolved(e.tok);
    for (auto &i : e.indexes)
      if (i) {
        expr(*i, L);
        if (i->type != L)
          unresolved(e.tok);
      }
    visit(*e.hist);
    if (e.type != L)
      setType(e, L);
    return;
  }
  if (!e.base || !e.base->global)
    return;
  ast::GlobalDecl &g = *e.base->global;
  resolveBoth(e, valueSlot(g), t_);
  e.base->type = g.type;
  if (e.indexes.size() != g.indexTypes.size()) {
    unresolved(e.tok);
    return;
  }
  for (size_t i = 0; i < e.indexes.size(); ++i)
    resolveIndex(e.indexes[i].get(), g, i);
}

void TypeInferencePass::visit(ast::InExpr &e) {
  Type wanted = t_;
  if (e.hist) {
    for (auto &k : e.keys)
      if (k)
        expr(*k, L);
    visit(*e.hist);
  } else if (e.base && e.base->global) {
    ast::GlobalDecl &g = *e.base->global;
    e.base->type = g.type;
    if (e.keys.size() == g.indexTypes.size())
      for (size_t i = 0; i < e.keys.size(); ++i)
        resolveIndex(e.keys[i].get(), g, i);
  }
  if (wanted == U && e.type != U)
    return;
  if (wanted == S || wanted == ST)
    mismatch(e.tok, wanted, L);
  else if (e.type == U)
    setType(e, L);
}

void TypeInferencePass::visit(ast::FunctionCall &e) {
  Type original = t_;
  if (e.callees.empty()) {
    const BuiltinFunction *b = findBuiltin(e.name, e.args.size());
    if (!b)
      return; // reported by name resolution
    Type ret = b->returnType();
    if (ret != U) {
      if (e.type != ret)
        setType(e, ret);
      if (original != U && original != ret)
        mismatch(e.tok, original, ret);
    } else if (original != U) {
      unresolved(e.tok); // the value of a function that returns none
    }
    for (size_t i = 0; i < e.args.size(); ++i)
      checkArg(b->paramType(i), *e.args[i]);
    return;
  }
  for (ast::FunctionDecl *f : e.callees) {
    resolveBoth(e, returnSlot(*f), original, /*acceptUnknown=*/true);
    if (e.type == ST)
      invalid(e.tok, ST);
    if (e.args.size() != f->params.size() || f->locals.size() < f->params.size()) {
      unresolved(e.tok);
      continue;
    }
    for (size_t i = 0; i < e.args.size(); ++i)
      resolveParam(*e.args[i], *f, i);
  }
}

void TypeInferencePass::visit(ast::PrintFormat &e) {
  size_t unresolvedArgs = 0;
  if (e.hist) {
    visit(*e.hist);
  } else if (e.kind == ast::PrintKind::Printf || e.kind == ast::PrintKind::Sprintf) {
    using Conv = ast::FormatComponent::Conv;
    using Size = ast::FormatComponent::Size;
    // Each conversion takes an argument, and each `*` width or precision a long.
    std::vector<Type> wanted;
    for (const auto &c : e.components) {
      if (c.conv == Conv::Literal || c.conv == Conv::Percent)
        continue;
      if (c.width == Size::Star)
        wanted.push_back(L);
      if (c.precision == Size::Star)
        wanted.push_back(L);
      wanted.push_back(c.conv == Conv::String ? S : L);
    }
    if (wanted.size() != e.args.size()) {
      diags_.error("Wrong number of args to formatted print operator", e.tok);
      for (auto &a : e.args)
        expr(*a, U);
    } else {
      for (size_t i = 0; i < wanted.size(); ++i)
        checkArg(wanted[i], *e.args[i]);
    }
  } else if (e.kind == ast::PrintKind::PrintChar) {
    for (auto &a : e.args)
      checkArg(L, *a);
  } else {
    for (auto &a : e.args) {
      expr(*a, U);
      if (a->type == U) {
        unresolved(a->tok);
        ++unresolvedArgs;
      }
    }
  }
  if (unresolvedArgs == 0) {
    if (e.type == U)
      setType(e, ast::printKindReturnsString(e.kind) ? S : L);
  } else {
    e.type = U;
    unresolved(e.tok);
  }
}

void TypeInferencePass::visit(ast::StatOp &e) {
  if (e.operand)
    expr(*e.operand, ST);
  if (e.type == U)
    setType(e, L);
  else if (e.type != L)
    mismatch(e.tok, L, e.type);
}

} // namespace sonde::sema::types
