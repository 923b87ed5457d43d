// Statements: blocks, conditionals, loops, try/catch, jumps and delete. The
// action accounting follows stap's translator statement by statement, so
// MAXACTION trips at the same statement it would in stap.
#include "codegen/IrGenerator.h"

namespace sonde::codegen {

void IrGenerator::visit(ast::Block &s) {
  for (auto &stmt : s.stmts)
    emitStatement(*stmt);
}

void IrGenerator::visit(ast::NullStmt &) {}

void IrGenerator::visit(ast::ExprStmt &s) {
  if (deadStores_.count(&s))
    return;
  eval(*s.expr);
  recordActions(1, s.tok);
}

void IrGenerator::visit(ast::IfStmt &s) {
  recordActions(1, s.tok, true);
  llvm::Value *cond = evalCondition(*s.cond);
  llvm::BasicBlock *thenBlock = newBlock("if.then");
  llvm::BasicBlock *elseBlock = s.elseStmt ? newBlock("if.else") : nullptr;
  llvm::BasicBlock *done = newBlock("if.end");
  b_.CreateCondBr(cond, thenBlock, elseBlock ? elseBlock : done);
  b_.SetInsertPoint(thenBlock);
  emitStatement(*s.thenStmt);
  recordActions(0, s.thenStmt->tok, true);
  b_.CreateBr(done);
  if (elseBlock) {
    b_.SetInsertPoint(elseBlock);
    emitStatement(*s.elseStmt);
    recordActions(0, s.elseStmt->tok, true);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

// stap turns `while (c) s` into `for (; c; ) s`: an iteration costs one action
// plus its statements, charged at the end of the body.
void IrGenerator::visit(ast::WhileStmt &s) {
  recordActions(1, s.tok, true);
  llvm::BasicBlock *top = newBlock("while.top");
  llvm::BasicBlock *body = newBlock("while.body");
  llvm::BasicBlock *done = newBlock("while.end");
  b_.CreateBr(top);
  b_.SetInsertPoint(top);
  recordActions(1, s.tok);
  b_.CreateCondBr(evalCondition(*s.cond), body, done);
  b_.SetInsertPoint(body);
  pushScope({Scope::Kind::Loop, done, top});
  emitStatement(*s.body);
  recordActions(0, s.body->tok, true);
  popScope();
  b_.CreateBr(top);
  b_.SetInsertPoint(done);
}

void IrGenerator::visit(ast::ForStmt &s) {
  if (s.init) {
    eval(*s.init);
    recordActions(1, s.init->tok);
  }
  recordActions(1, s.tok, true);
  llvm::BasicBlock *top = newBlock("for.top");
  llvm::BasicBlock *body = newBlock("for.body");
  llvm::BasicBlock *next = newBlock("for.next");
  llvm::BasicBlock *done = newBlock("for.end");
  b_.CreateBr(top);
  b_.SetInsertPoint(top);
  recordActions(1, s.tok);
  if (s.cond)
    b_.CreateCondBr(evalCondition(*s.cond), body, done);
  else
    b_.CreateBr(body);
  b_.SetInsertPoint(body);
  pushScope({Scope::Kind::Loop, done, next});
  emitStatement(*s.body);
  recordActions(0, s.body->tok, true);
  popScope();
  b_.CreateBr(next);
  b_.SetInsertPoint(next);
  if (s.incr) {
    eval(*s.incr);
    recordActions(1, s.incr->tok);
  }
  b_.CreateBr(top);
  b_.SetInsertPoint(done);
}

// Errors inside `try` land in the catch dispatch, which passes uncatchable ones
// (MAXACTION, abort()) on to the enclosing scope.
void IrGenerator::visit(ast::TryStmt &s) {
  recordActions(0, s.tok, true);
  llvm::BasicBlock *dispatch = newBlock("catch.dispatch");
  llvm::BasicBlock *done = newBlock("try.end");
  Scope scope{Scope::Kind::Try};
  scope.catchTo = dispatch;
  pushScope(scope);
  emitStatement(*s.tryBlock);
  recordActions(0, s.tryBlock->tok, true);
  popScope();
  b_.CreateBr(done);

  b_.SetInsertPoint(dispatch);
  llvm::Value *uncatchable =
      b_.loadContextI32(fs_.ctx, offsetof(sonde_context, uncatchable), "uncatchable");
  llvm::BasicBlock *caught = newBlock("catch");
  b_.CreateCondBr(b_.CreateICmpNE(uncatchable, b_.getInt32(0)), errorLanding(), caught);
  b_.SetInsertPoint(caught);
  llvm::Value *message = s.catchVar ? scalarAddress(*s.catchVar) : nullptr;
  if (!message)
    message = stringTemp();
  b_.CreateCall(SONDE_RT(b_, sonde_error_take), {fs_.ctx, message});
  b_.CreateStore(b_.getInt32(0), b_.contextField(fs_.ctx, offsetof(sonde_context, error)));
  recordActions(1, s.tok, true);
  emitStatement(*s.catchBlock);
  recordActions(0, s.catchBlock->tok, true);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void IrGenerator::visit(ast::ReturnStmt &s) {
  if (!fs_.decl) {
    fail("cannot 'return' from probe", s.tok);
    return;
  }
  if (s.value) {
    Value v = eval(*s.value);
    if (fs_.returnOut)
      target_.copyString(b_, fs_.returnOut, v.v, strCap_);
    else if (fs_.returnSlot)
      b_.CreateStore(v.v, fs_.returnSlot);
  }
  recordActions(1, s.tok, true);
  leaveScopesDownTo(0);
  b_.CreateBr(fs_.exit);
  startDeadBlock();
}

// In a handler `next` ends it; in a function it hands the call to the next
// function of the same-arity chain (the caller tests the flag).
void IrGenerator::visit(ast::NextStmt &s) {
  recordActions(1, s.tok, true);
  if (fs_.nextFlag)
    b_.CreateStore(b_.getInt32(1), fs_.nextFlag);
  leaveScopesDownTo(0);
  b_.CreateBr(fs_.exit);
  startDeadBlock();
}

void IrGenerator::visit(ast::BreakStmt &s) { jumpOutOfLoop(s.tok, true); }

void IrGenerator::visit(ast::ContinueStmt &s) { jumpOutOfLoop(s.tok, false); }

// break / continue: to the innermost loop's exit or next iteration, ending the
// foreach loops left on the way (a try is not a loop).
void IrGenerator::jumpOutOfLoop(const Token &tok, bool isBreak) {
  for (size_t i = fs_.scopes.size(); i > 0; --i) {
    Scope &loop = fs_.scopes[i - 1];
    if (loop.kind == Scope::Kind::Try)
      continue;
    recordActions(1, tok, true);
    leaveScopesDownTo(i);
    b_.CreateBr(isBreak ? loop.breakTo : loop.continueTo);
    startDeadBlock();
    return;
  }
  fail(isBreak ? "cannot 'break' outside loop" : "cannot 'continue' outside loop", tok);
}

// delete a / a[k] / a[k, *] / scalar (back to 0, "" or empty stats).
void IrGenerator::visit(ast::DeleteStmt &s) {
  if (auto *a = dynamic_cast<ast::ArrayIndex *>(s.target.get())) {
    if (!a->base) {
      fail("cannot delete histogram bucket entries", a->tok);
      return;
    }
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return;
    llvm::Value *map = globalHeader(*a->base->global);
    uint32_t wild = 0;
    llvm::Value *keys = evalKeys(*slot, a->indexes, &wild, a->tok);
    if (wild)
      b_.CreateCall(SONDE_RT(b_, sonde_map_delete_wild), {map, keys, b_.constU32(wild)});
    else
      b_.CreateCall(SONDE_RT(b_, sonde_map_delete), {map, keys});
  } else if (auto *sym = dynamic_cast<ast::Symbol *>(s.target.get())) {
    if (sym->local && sym->local->type != ast::Type::Stats) {
      llvm::Value *slot = localSlot(*sym->local);
      if (sym->local->type == ast::Type::String)
        b_.CreateStore(b_.getInt8(0), slot);
      else
        b_.CreateStore(b_.constLong(0), slot);
    } else if (const GlobalSlot *slot = slotOf(sym->global, sym->tok)) {
      if (slot->isArray())
        b_.CreateCall(SONDE_RT(b_, sonde_map_clear), {globalHeader(*sym->global)});
      else if (slot->desc->value == values::ValueKind::Stats)
        b_.CreateCall(SONDE_RT(b_, sonde_stats_clear), {globalHeader(*sym->global)});
      else if (slot->desc->value == values::ValueKind::String)
        b_.CreateStore(b_.getInt8(0), globalData(*sym->global));
      else
        b_.CreateStore(b_.constLong(0), globalData(*sym->global));
    }
  } else {
    fail("invalid operand of delete expression", s.tok);
    return;
  }
  recordActions(1, s.tok);
}

void IrGenerator::visit(ast::ForeachStmt &s) {
  if (s.hist)
    foreachBuckets(s);
  else
    foreachArray(s);
}

} // namespace sonde::codegen
