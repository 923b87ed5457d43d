// Literals, operators, comparisons, strings, regular expressions and variables.
#include "codegen/IrGenerator.h"

#include <algorithm>
#include <regex.h>

namespace sonde::codegen {

Value IrGenerator::eval(ast::Expr &e) {
  result_ = {};
  e.accept(*this);
  if (!result_.v) // an error was reported: a stand-in keeps generation going
    result_ = e.type == ast::Type::String ? Value{stringLiteral(""), ast::Type::String}
                                          : Value{b_.constLong(0), ast::Type::Long};
  return result_;
}

llvm::Value *IrGenerator::evalCondition(ast::Expr &e) {
  return b_.CreateICmpNE(evalLong(e), b_.constLong(0), "cond");
}

llvm::Value *IrGenerator::stringLiteral(const std::string &s) {
  return target_.stringConstant(b_, llvm::StringRef(s).take_front(strCap_ - 1));
}

void IrGenerator::visit(ast::NumberLit &e) { result_ = {b_.constLong(e.value), ast::Type::Long}; }

void IrGenerator::visit(ast::StringLit &e) {
  result_ = {stringLiteral(e.value), ast::Type::String};
}

// Wrapping 64-bit arithmetic; shift counts masked to 0..63; division checks for
// zero and, like stap's _stp_div64, gives INT64_MIN / -1 = INT64_MIN, x % -1 = 0.
llvm::Value *IrGenerator::longBinary(ast::BinaryOp op, llvm::Value *l, llvm::Value *r,
                                     const Token &tok) {
  using Op = ast::BinaryOp;
  switch (op) {
  case Op::Add: return b_.CreateAdd(l, r);
  case Op::Sub: return b_.CreateSub(l, r);
  case Op::Mul: return b_.CreateMul(l, r);
  case Op::Div:
  case Op::Mod: {
    raiseIf(b_.CreateICmpEQ(r, b_.constLong(0)), SONDE_ERROR_DIVISION_BY_ZERO, tok);
    llvm::Value *minusOne = b_.CreateICmpEQ(r, b_.constLong(-1));
    llvm::Value *safe = b_.CreateSelect(minusOne, b_.constLong(1), r);
    if (op == Op::Div)
      return b_.CreateSelect(minusOne, b_.CreateSub(b_.constLong(0), l), b_.CreateSDiv(l, safe));
    return b_.CreateSelect(minusOne, b_.constLong(0), b_.CreateSRem(l, safe));
  }
  case Op::Shl: return b_.CreateShl(l, b_.CreateAnd(r, b_.constLong(63)));
  case Op::Shr: return b_.CreateAShr(l, b_.CreateAnd(r, b_.constLong(63)));
  case Op::LShr: return b_.CreateLShr(l, b_.CreateAnd(r, b_.constLong(63)));
  case Op::BitAnd: return b_.CreateAnd(l, r);
  case Op::BitOr: return b_.CreateOr(l, r);
  case Op::BitXor: return b_.CreateXor(l, r);
  case Op::Concat: break;
  }
  fail("invalid operator for long operands", tok);
  return b_.constLong(0);
}

// a . b . c ... is ((a . b) . c) ...: the left spine is followed in a loop, not
// recursively, and the target joins the parts (the native one into a single
// buffer). Each operand is evaluated after the ones before it are copied, so it
// may change what they pointed at (a function call assigning a global).
Value IrGenerator::concat(ast::BinaryExpr &e) {
  std::vector<ast::Expr *> operands;
  ast::Expr *left = &e;
  for (auto *b = &e; b && b->op == ast::BinaryOp::Concat;
       b = dynamic_cast<ast::BinaryExpr *>(left)) {
    operands.push_back(b->rhs.get());
    left = b->lhs.get();
  }
  operands.push_back(left);
  std::reverse(operands.begin(), operands.end());
  llvm::Value *out = target_.concatStrings(
      b_, operands.size(), [&](size_t i) { return evalString(*operands[i]); },
      [&] { return stringTemp(); }, strCap_);
  return {out, ast::Type::String};
}

void IrGenerator::visit(ast::BinaryExpr &e) {
  if (e.op == ast::BinaryOp::Concat) {
    result_ = concat(e);
    return;
  }
  llvm::Value *l = evalLong(*e.lhs);
  llvm::Value *r = evalLong(*e.rhs);
  result_ = {longBinary(e.op, l, r, e.tok), ast::Type::Long};
}

void IrGenerator::visit(ast::LogicalExpr &e) {
  bool isAnd = e.op == ast::LogicalOp::And;
  llvm::Value *lhs = evalCondition(*e.lhs);
  llvm::BasicBlock *lhsEnd = b_.GetInsertBlock();
  llvm::BasicBlock *rhsBlock = newBlock(isAnd ? "and.rhs" : "or.rhs");
  llvm::BasicBlock *done = newBlock(isAnd ? "and.end" : "or.end");
  if (isAnd)
    b_.CreateCondBr(lhs, rhsBlock, done);
  else
    b_.CreateCondBr(lhs, done, rhsBlock);
  b_.SetInsertPoint(rhsBlock);
  llvm::Value *rhs = evalCondition(*e.rhs);
  llvm::BasicBlock *rhsEnd = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode *phi = b_.CreatePHI(b_.getInt1Ty(), 2);
  phi->addIncoming(b_.getInt1(!isAnd), lhsEnd);
  phi->addIncoming(rhs, rhsEnd);
  result_ = {toI64(phi), ast::Type::Long};
}

void IrGenerator::visit(ast::UnaryExpr &e) {
  llvm::Value *v = evalLong(*e.operand);
  switch (e.op) {
  case ast::UnaryOp::Plus: break;
  case ast::UnaryOp::Neg: v = b_.CreateSub(b_.constLong(0), v); break;
  case ast::UnaryOp::Not: v = toI64(b_.CreateICmpEQ(v, b_.constLong(0))); break;
  case ast::UnaryOp::BitNot: v = b_.CreateNot(v); break;
  }
  result_ = {v, ast::Type::Long};
}

namespace {

llvm::CmpInst::Predicate predicateOf(ast::CompareOp op) {
  switch (op) {
  case ast::CompareOp::Lt: return llvm::CmpInst::ICMP_SLT;
  case ast::CompareOp::Gt: return llvm::CmpInst::ICMP_SGT;
  case ast::CompareOp::Le: return llvm::CmpInst::ICMP_SLE;
  case ast::CompareOp::Ge: return llvm::CmpInst::ICMP_SGE;
  case ast::CompareOp::Eq: return llvm::CmpInst::ICMP_EQ;
  case ast::CompareOp::Ne: return llvm::CmpInst::ICMP_NE;
  }
  return llvm::CmpInst::ICMP_EQ;
}

bool isPlainOperand(const ast::Expr &e) {
  return dynamic_cast<const ast::StringLit *>(&e) || dynamic_cast<const ast::Symbol *>(&e);
}

} // namespace

void IrGenerator::visit(ast::CompareExpr &e) {
  if (e.lhs->type == ast::Type::String) {
    llvm::Value *l = evalString(*e.lhs);
    // A variable on the left keeps the value it had before the right side ran.
    if (dynamic_cast<ast::Symbol *>(e.lhs.get()) && !isPlainOperand(*e.rhs)) {
      llvm::Value *copy = stringTemp();
      target_.copyString(b_, copy, l, strCap_);
      l = copy;
    }
    llvm::Value *r = evalString(*e.rhs);
    llvm::Value *cmp = target_.compareStrings(b_, l, r);
    result_ = {toI64(b_.CreateICmp(predicateOf(e.op), cmp, b_.getInt32(0))), ast::Type::Long};
    return;
  }
  llvm::Value *l = evalLong(*e.lhs);
  llvm::Value *r = evalLong(*e.rhs);
  result_ = {toI64(b_.CreateICmp(predicateOf(e.op), l, r)), ast::Type::Long};
}

// s =~ "re": POSIX extended syntax, compiled once per module and process by the
// runtime (the module keeps one cache slot per pattern); checked here first.
void IrGenerator::visit(ast::RegexMatch &e) {
  regex_t re;
  int rc = regcomp(&re, e.pattern.c_str(), REG_EXTENDED);
  if (rc != 0) {
    char why[256];
    regerror(rc, &re, why, sizeof why);
    fail(std::string("regex error: ") + why, e.tok);
    return;
  }
  regfree(&re);
  llvm::GlobalVariable *&slot = regexCache_[e.pattern];
  if (!slot)
    slot = new llvm::GlobalVariable(module_, b_.ptrTy(), false, llvm::GlobalValue::InternalLinkage,
                                    llvm::ConstantPointerNull::get(b_.ptrTy()), "regex");
  llvm::Value *subject = evalString(*e.lhs);
  llvm::Value *pattern = target_.stringConstant(b_, e.pattern);
  llvm::Value *matched = b_.CreateCall(SONDE_RT(b_, sonde_regex_match),
                                       {fs_.ctx, slot, pattern, subject, b_.constU32(loc(e.tok))});
  branchOnError();
  if (e.negated)
    matched = b_.CreateXor(matched, b_.constLong(1));
  result_ = {matched, ast::Type::Long};
}

void IrGenerator::visit(ast::TernaryExpr &e) {
  llvm::Value *cond = evalCondition(*e.cond);
  llvm::BasicBlock *thenBlock = newBlock("cond.then");
  llvm::BasicBlock *elseBlock = newBlock("cond.else");
  llvm::BasicBlock *done = newBlock("cond.end");
  b_.CreateCondBr(cond, thenBlock, elseBlock);
  b_.SetInsertPoint(thenBlock);
  Value t = eval(*e.thenExpr);
  llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(elseBlock);
  Value f = eval(*e.elseExpr);
  llvm::BasicBlock *elseEnd = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode *phi = b_.CreatePHI(t.v->getType(), 2);
  phi->addIncoming(t.v, thenEnd);
  phi->addIncoming(f.v, elseEnd);
  result_ = {phi, e.type};
}

// ------------------------------------------------------------------ variables

const GlobalSlot *IrGenerator::slotOf(const ast::GlobalDecl *g, const Token &tok) {
  if (const GlobalSlot *slot = facts_.findSlot(g))
    return slot;
  fail("global has no storage (its type was never inferred)", tok);
  return nullptr;
}

llvm::Value *IrGenerator::globalData(const ast::GlobalDecl &g) {
  return target_.globalData(b_, fs_.base, facts_.slot(g));
}

llvm::Value *IrGenerator::globalHeader(const ast::GlobalDecl &g) {
  return target_.globalHeader(b_, fs_.base, facts_.slot(g));
}

void IrGenerator::visit(ast::Symbol &s) {
  if (s.local) {
    if (s.local->type == ast::Type::Stats) {
      fail("invalid use of a stats value", s.tok);
      return;
    }
    llvm::Value *slot = localSlot(*s.local);
    result_ = s.local->type == ast::Type::String
                  ? Value{slot, ast::Type::String}
                  : Value{b_.CreateLoad(b_.longTy(), slot, s.name), ast::Type::Long};
    return;
  }
  const GlobalSlot *slot = slotOf(s.global, s.tok);
  if (!slot)
    return;
  if (slot->isArray() || slot->desc->value == values::ValueKind::Stats) {
    fail("invalid use of an array or stats global as a value", s.tok);
    return;
  }
  llvm::Value *data = globalData(*s.global);
  result_ = slot->desc->value == values::ValueKind::String
                ? Value{data, ast::Type::String}
                : Value{b_.CreateLoad(b_.longTy(), data, s.name), ast::Type::Long};
}

// ------------------------------------------------------------------ context
// ($ variables, @cast, @var and @defined: GenContextVariables.cpp)

void IrGenerator::visit(ast::EntryOp &e) {
  fail("@entry is allowed only in .return probes", e.tok);
}
void IrGenerator::visit(ast::ProbewriteOp &e) { fail("unexpected @probewrite", e.tok); }
void IrGenerator::visit(ast::SpecialAtOp &e) {
  fail(e.tok.text + " is not supported by this build yet", e.tok);
}
void IrGenerator::visit(ast::HistOp &e) {
  fail("base histogram operator where expression expected", e.tok);
}

} // namespace sonde::codegen
