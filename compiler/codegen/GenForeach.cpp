// foreach over an array (sorted or not, sliced, limited) through a snapshot
// iterator, and foreach over the buckets of a histogram.
#include "codegen/IrGenerator.h"

#include <limits>

namespace sonde::codegen {

namespace {

int32_t extractorOf(std::optional<ast::StatFn> f) {
  if (!f)
    return SONDE_STAT_COUNT; // stap sorts stats by @count unless told otherwise
  switch (*f) {
  case ast::StatFn::Count: return SONDE_STAT_COUNT;
  case ast::StatFn::Sum: return SONDE_STAT_SUM;
  case ast::StatFn::Min: return SONDE_STAT_MIN;
  case ast::StatFn::Max: return SONDE_STAT_MAX;
  case ast::StatFn::Avg: return SONDE_STAT_AVG;
  case ast::StatFn::Variance: return SONDE_STAT_VARIANCE;
  }
  return SONDE_STAT_COUNT;
}

} // namespace

// A loop variable takes the entry's key or value (a copy: the variable may be
// changed in the body without touching the array).
void IrGenerator::assignVariable(ast::Symbol &var, Value value) {
  llvm::Value *addr = scalarAddress(var);
  if (!addr)
    return;
  if (value.type == ast::Type::String)
    target_.copyString(b_, addr, value.v, strCap_);
  else
    b_.CreateStore(value.v, addr);
}

void IrGenerator::foreachArray(ast::ForeachStmt &s) {
  const GlobalSlot *slot = slotOf(s.base->global, s.base->tok);
  if (!slot)
    return;
  llvm::Value *map = globalHeader(*s.base->global);
  // The limit and the slice are evaluated once, before the loop.
  llvm::Value *limit =
      s.limit ? evalLong(*s.limit) : b_.constLong(std::numeric_limits<int64_t>::max());
  uint32_t wild = 0;
  llvm::Value *slice = s.slice.empty() ? llvm::ConstantPointerNull::get(b_.ptrTy())
                                       : evalKeys(*slot, s.slice, &wild, s.tok);

  auto *specTy = llvm::ArrayType::get(b_.longTy(), sizeof(sonde_foreach_spec) / 8);
  llvm::Value *spec = b_.entryAlloca(specTy, "spec");
  auto field = [&](size_t offset) { return b_.bytePtr(spec, offset); };
  int32_t column = s.sortDir == ast::SortDir::None ? SONDE_SORT_NONE : s.sortColumn;
  b_.CreateStore(b_.getInt32(column), field(offsetof(sonde_foreach_spec, sort_column)));
  b_.CreateStore(b_.getInt32(s.sortDir == ast::SortDir::Descending ? 1 : 0),
                 field(offsetof(sonde_foreach_spec, descending)));
  b_.CreateStore(b_.getInt32(extractorOf(s.sortAggregate)),
                 field(offsetof(sonde_foreach_spec, extractor)));
  b_.CreateStore(b_.getInt32(wild), field(offsetof(sonde_foreach_spec, slice_wild)));
  b_.CreateStore(limit, field(offsetof(sonde_foreach_spec, limit)));
  b_.CreateStore(slice, field(offsetof(sonde_foreach_spec, slice)));

  auto *iterTy = llvm::ArrayType::get(b_.longTy(), sizeof(sonde_iter) / 8);
  llvm::Value *it = b_.entryAlloca(iterTy, "iter");
  llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_foreach_begin), {map, spec, it});
  raiseStatusIfFailed(st, s.tok);
  recordActions(1, s.tok, true);

  llvm::BasicBlock *top = newBlock("foreach.top");
  llvm::BasicBlock *body = newBlock("foreach.body");
  llvm::BasicBlock *done = newBlock("foreach.end");
  b_.CreateBr(top);
  b_.SetInsertPoint(top);
  recordActions(1, s.tok);
  llvm::Value *more = b_.CreateCall(SONDE_RT(b_, sonde_foreach_next), {it});
  b_.CreateCondBr(b_.CreateICmpNE(more, b_.getInt32(0)), body, done);

  b_.SetInsertPoint(body);
  for (size_t i = 0; i < s.keys.size(); ++i) {
    llvm::Value *column = b_.constU32(static_cast<uint32_t>(i + 1));
    if (slot->desc->keys[i] == values::KeyKind::String)
      assignVariable(*s.keys[i], {b_.CreateCall(SONDE_RT(b_, sonde_iter_key_string), {it, column}),
                                  ast::Type::String});
    else
      assignVariable(*s.keys[i], {b_.CreateCall(SONDE_RT(b_, sonde_iter_key_long), {it, column}),
                                  ast::Type::Long});
  }
  if (s.value) {
    if (slot->desc->value == values::ValueKind::Stats) {
      if (s.value->local)
        fs_.statsValues[s.value->local] = {it, &s};
    } else if (slot->desc->value == values::ValueKind::String) {
      assignVariable(*s.value, {b_.CreateCall(SONDE_RT(b_, sonde_iter_value_string), {it}),
                                ast::Type::String});
    } else {
      assignVariable(*s.value,
                     {b_.CreateCall(SONDE_RT(b_, sonde_iter_value_long), {it}), ast::Type::Long});
    }
  }
  Scope scope{Scope::Kind::Foreach, done, top};
  scope.iterator = it;
  pushScope(scope);
  emitStatement(*s.body);
  recordActions(0, s.body->tok, true);
  popScope();
  b_.CreateBr(top);

  b_.SetInsertPoint(done);
  b_.CreateCall(SONDE_RT(b_, sonde_foreach_end), {it});
}

// foreach ([v =] b in @hist_*(s)): b runs over the bucket indexes, v is the count.
void IrGenerator::foreachBuckets(ast::ForeachStmt &s) {
  llvm::Value *summary = statsSummary(*s.hist->operand, s.hist->tok);
  llvm::Value *count =
      b_.CreateZExt(b_.CreateLoad(b_.getInt32Ty(),
                                  b_.bytePtr(summary, offsetof(sonde_stat_summary, bucket_count))),
                    b_.longTy(), "buckets");
  if (s.limit) {
    // Visiting at most `limit` buckets is visiting the first min(limit, n).
    llvm::Value *given = evalLong(*s.limit);
    llvm::Value *limit =
        b_.CreateSelect(b_.CreateICmpSLT(given, b_.constLong(0)), b_.constLong(0), given);
    count = b_.CreateSelect(b_.CreateICmpULT(limit, count), limit, count);
  }
  recordActions(1, s.tok, true);
  llvm::Value *index = b_.entryAlloca(b_.longTy(), "bucket.index");
  b_.CreateStore(b_.constLong(0), index);

  llvm::BasicBlock *top = newBlock("buckets.top");
  llvm::BasicBlock *body = newBlock("buckets.body");
  llvm::BasicBlock *next = newBlock("buckets.next");
  llvm::BasicBlock *done = newBlock("buckets.end");
  b_.CreateBr(top);
  b_.SetInsertPoint(top);
  llvm::Value *i = b_.CreateLoad(b_.longTy(), index, "bucket");
  b_.CreateCondBr(b_.CreateICmpSLT(i, count), body, done);

  b_.SetInsertPoint(body);
  if (!s.keys.empty())
    assignVariable(*s.keys[0], {i, ast::Type::Long});
  if (s.value) {
    llvm::Value *buckets = b_.bytePtr(summary, offsetof(sonde_stat_summary, buckets));
    llvm::Value *n = b_.CreateLoad(b_.longTy(), b_.CreateInBoundsGEP(b_.longTy(), buckets, i));
    assignVariable(*s.value, {n, ast::Type::Long});
  }
  pushScope({Scope::Kind::Loop, done, next});
  emitStatement(*s.body);
  recordActions(1, s.body->tok, true);
  popScope();
  b_.CreateBr(next);
  b_.SetInsertPoint(next);
  b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.longTy(), index), b_.constLong(1)), index);
  b_.CreateBr(top);
  b_.SetInsertPoint(done);
}

} // namespace sonde::codegen
