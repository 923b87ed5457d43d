// Assignment operators, ++/-- and <<< on locals, globals and array elements.
// The right side runs before the target is read or located, so a failing
// right side (or a division by zero) leaves the target untouched.
#include "codegen/IrGenerator.h"

namespace sonde::codegen {

std::optional<ast::BinaryOp> IrGenerator::arithmeticOf(ast::AssignOp op) {
  using A = ast::AssignOp;
  using B = ast::BinaryOp;
  switch (op) {
  case A::AddAssign: return B::Add;
  case A::SubAssign: return B::Sub;
  case A::MulAssign: return B::Mul;
  case A::DivAssign: return B::Div;
  case A::ModAssign: return B::Mod;
  case A::ShlAssign: return B::Shl;
  case A::ShrAssign: return B::Shr;
  case A::AndAssign: return B::BitAnd;
  case A::XorAssign: return B::BitXor;
  case A::OrAssign: return B::BitOr;
  default: return std::nullopt;
  }
}

// `x /= y` by zero names the divisor, as stap does for the assignment forms.
const Token &IrGenerator::divisionToken(const ast::AssignExpr &e) { return e.rhs->tok; }

llvm::Value *IrGenerator::scalarAddress(ast::Symbol &s) {
  if (s.local) {
    if (s.local->type == ast::Type::Stats) {
      fail("invalid use of a stats value", s.tok);
      return nullptr;
    }
    return localSlot(*s.local);
  }
  const GlobalSlot *slot = slotOf(s.global, s.tok);
  if (!slot)
    return nullptr;
  if (slot->isArray() || slot->desc->value == values::ValueKind::Stats) {
    fail("Expecting lvalue for assignment", s.tok);
    return nullptr;
  }
  return globalData(*s.global);
}

Value IrGenerator::assignScalar(ast::AssignOp op, llvm::Value *addr, ast::Type type, ast::Expr &rhs,
                                const Token &tok, bool shared) {
  if (type == ast::Type::String) {
    llvm::Value *v = evalString(rhs);
    if (op == ast::AssignOp::ConcatAssign)
      target_.appendString(b_, addr, v, strCap_);
    else
      target_.copyString(b_, addr, v, strCap_);
    return {addr, ast::Type::String};
  }
  llvm::Value *v = evalLong(rhs);
  auto arith = arithmeticOf(op);
  if (arith && (*arith == ast::BinaryOp::Add || *arith == ast::BinaryOp::Sub) && shared) {
    llvm::Value *delta = *arith == ast::BinaryOp::Add ? v : b_.CreateSub(b_.constLong(0), v);
    return {b_.CreateAdd(addToLong(addr, delta, true), delta), ast::Type::Long};
  }
  if (arith)
    v = longBinary(*arith, b_.CreateLoad(b_.longTy(), addr), v, tok);
  b_.CreateStore(v, addr);
  return {v, ast::Type::Long};
}

// Kernel handlers take no locks: there a global's ++, --, += and -= are one
// atomic add, so concurrent CPUs lose no update. Returns the old value.
llvm::Value *IrGenerator::addToLong(llvm::Value *addr, llvm::Value *delta, bool shared) {
  if (shared && target_.inKernel())
    return b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, addr, delta, llvm::Align(8),
                              llvm::AtomicOrdering::Monotonic);
  llvm::Value *old = b_.CreateLoad(b_.longTy(), addr);
  b_.CreateStore(b_.CreateAdd(old, delta), addr);
  return old;
}

Value IrGenerator::assignElement(ast::AssignExpr &e, ast::ArrayIndex &a) {
  const GlobalSlot *slot = slotOf(a.base->global, a.tok);
  if (!slot)
    return {};
  llvm::Value *map = globalHeader(*a.base->global);
  llvm::Value *keys = evalKeys(*slot, a.indexes, nullptr, a.tok);
  if (slot->desc->value == values::ValueKind::String) {
    llvm::Value *v = evalString(*e.rhs);
    if (e.op == ast::AssignOp::ConcatAssign) {
      llvm::Value *ref = b_.entryAlloca(b_.ptrTy(), "ref");
      llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_map_ref_string), {map, keys, ref});
      raiseStatusIfFailed(st, a.tok, map);
      llvm::Value *buf = b_.CreateLoad(b_.ptrTy(), ref);
      target_.appendString(b_, buf, v, strCap_);
      return {buf, ast::Type::String};
    }
    llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_map_set_string), {map, keys, v});
    raiseStatusIfFailed(st, a.tok, map);
    return {v, ast::Type::String};
  }
  llvm::Value *v = evalLong(*e.rhs);
  auto arith = arithmeticOf(e.op);
  if (!arith) {
    llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_map_set_long), {map, keys, v});
    raiseStatusIfFailed(st, a.tok, map);
    return {v, ast::Type::Long};
  }
  // Check the divisor before the element is created.
  if (*arith == ast::BinaryOp::Div || *arith == ast::BinaryOp::Mod)
    raiseIf(b_.CreateICmpEQ(v, b_.constLong(0)), SONDE_ERROR_DIVISION_BY_ZERO, divisionToken(e));
  llvm::Value *ref = b_.entryAlloca(b_.ptrTy(), "ref");
  llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_map_ref_long), {map, keys, ref});
  raiseStatusIfFailed(st, a.tok, map);
  llvm::Value *addr = b_.CreateLoad(b_.ptrTy(), ref);
  if (*arith == ast::BinaryOp::Add || *arith == ast::BinaryOp::Sub) {
    llvm::Value *delta = *arith == ast::BinaryOp::Add ? v : b_.CreateSub(b_.constLong(0), v);
    return {b_.CreateAdd(addToLong(addr, delta, true), delta), ast::Type::Long};
  }
  llvm::Value *result = longBinary(*arith, b_.CreateLoad(b_.longTy(), addr), v, divisionToken(e));
  b_.CreateStore(result, addr);
  return {result, ast::Type::Long};
}

void IrGenerator::accumulate(ast::AssignExpr &e) {
  if (auto *a = dynamic_cast<ast::ArrayIndex *>(e.lhs.get()); a && a->base) {
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return;
    llvm::Value *map = globalHeader(*a->base->global);
    llvm::Value *keys = evalKeys(*slot, a->indexes, nullptr, a->tok);
    llvm::Value *v = evalLong(*e.rhs);
    llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_map_stats_add), {map, keys, v});
    raiseStatusIfFailed(st, a->tok, map);
    result_ = {v, ast::Type::Long};
    return;
  }
  auto *s = dynamic_cast<ast::Symbol *>(e.lhs.get());
  const GlobalSlot *slot = s ? slotOf(s->global, s->tok) : nullptr;
  if (!slot || slot->isArray() || slot->desc->value != values::ValueKind::Stats) {
    if (!s || slot)
      fail("stat locals not supported, missing global declaration?", e.lhs->tok);
    return;
  }
  llvm::Value *v = evalLong(*e.rhs);
  b_.CreateCall(SONDE_RT(b_, sonde_stats_add), {globalHeader(*s->global), v});
  result_ = {v, ast::Type::Long};
}

void IrGenerator::visit(ast::AssignExpr &e) {
  if (e.op == ast::AssignOp::Accumulate) {
    accumulate(e);
    return;
  }
  if (auto *a = dynamic_cast<ast::ArrayIndex *>(e.lhs.get())) {
    if (!a->base) {
      fail("cannot assign to histogram buckets", e.tok);
      return;
    }
    result_ = assignElement(e, *a);
    return;
  }
  if (auto *s = dynamic_cast<ast::Symbol *>(e.lhs.get())) {
    if (llvm::Value *addr = scalarAddress(*s))
      result_ =
          assignScalar(e.op, addr, e.lhs->type, *e.rhs, divisionToken(e), s->global != nullptr);
    return;
  }
  fail("Expecting lvalue for assignment", e.tok);
}

Value IrGenerator::incDecElement(ast::IncDecExpr &e, ast::ArrayIndex &a) {
  const GlobalSlot *slot = slotOf(a.base->global, a.tok);
  if (!slot)
    return {};
  llvm::Value *map = globalHeader(*a.base->global);
  llvm::Value *keys = evalKeys(*slot, a.indexes, nullptr, a.tok);
  llvm::Value *ref = b_.entryAlloca(b_.ptrTy(), "ref");
  llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_map_ref_long), {map, keys, ref});
  raiseStatusIfFailed(st, a.tok, map);
  llvm::Value *addr = b_.CreateLoad(b_.ptrTy(), ref);
  return incDecAt(e, addr, true);
}

void IrGenerator::visit(ast::IncDecExpr &e) {
  if (auto *a = dynamic_cast<ast::ArrayIndex *>(e.operand.get())) {
    if (!a->base) {
      fail("cannot assign to histogram buckets", e.tok);
      return;
    }
    result_ = incDecElement(e, *a);
    return;
  }
  auto *s = dynamic_cast<ast::Symbol *>(e.operand.get());
  llvm::Value *addr = s ? scalarAddress(*s) : nullptr;
  if (!addr) {
    if (!s)
      fail("Expecting lvalue for assignment", e.tok);
    return;
  }
  result_ = incDecAt(e, addr, s->global != nullptr);
}

Value IrGenerator::incDecAt(ast::IncDecExpr &e, llvm::Value *addr, bool shared) {
  llvm::Value *delta = b_.constLong(e.increment ? 1 : -1);
  llvm::Value *old = addToLong(addr, delta, shared);
  return {e.prefix ? b_.CreateAdd(old, delta) : old, ast::Type::Long};
}

} // namespace sonde::codegen
