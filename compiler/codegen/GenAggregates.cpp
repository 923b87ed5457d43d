// Array elements, index keys, `in`, stats extractors and histogram buckets,
// through the value ABI (runtime/values/ValueAbi.h). Map functions assume the
// handler holds the map's lock, which it took on entry.
#include "codegen/IrGenerator.h"

namespace sonde::codegen {

namespace {

int32_t extractorOf(ast::StatFn f) {
  switch (f) {
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

// sonde_key[keyCount]: .l for long columns, .s for string columns. A null index
// is `*`: its bit goes into *wildMask (allowed only where wildMask is given).
llvm::Value *IrGenerator::evalKeys(const GlobalSlot &slot, std::vector<ast::ExprPtr> &indexes,
                                   uint32_t *wildMask, const Token &where) {
  auto *type = llvm::ArrayType::get(b_.longTy(), std::max<size_t>(indexes.size(), 1));
  llvm::Value *keys = b_.entryAlloca(type, "keys");
  if (indexes.size() != slot.desc->keyCount) {
    fail("wrong number of indexes for array '" + slot.desc->name + "'", where);
    return keys;
  }
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (!indexes[i]) {
      if (wildMask)
        *wildMask |= 1u << i;
      else
        fail("wildcard not allowed in array index", where);
      continue;
    }
    Value v = eval(*indexes[i]);
    b_.CreateStore(v.v, b_.CreateConstInBoundsGEP2_64(type, keys, 0, i));
  }
  return keys;
}

// The keys of the entry a foreach is on (from its iterator: the body may have
// changed the key variables).
llvm::Value *IrGenerator::currentKeys(const StatsBinding &binding) {
  const values::GlobalDesc &desc = *facts_.slot(*binding.loop->base->global).desc;
  auto *type = llvm::ArrayType::get(b_.longTy(), std::max<size_t>(desc.keyCount, 1));
  llvm::Value *keys = b_.entryAlloca(type, "keys");
  for (uint32_t i = 0; i < desc.keyCount; ++i) {
    llvm::Value *column = b_.constU32(i + 1);
    llvm::Value *key =
        desc.keys[i] == values::KeyKind::String
            ? b_.CreateCall(SONDE_RT(b_, sonde_iter_key_string), {binding.iterator, column})
            : b_.CreateCall(SONDE_RT(b_, sonde_iter_key_long), {binding.iterator, column});
    b_.CreateStore(key, b_.CreateConstInBoundsGEP2_64(type, keys, 0, i));
  }
  return keys;
}

const IrGenerator::StatsBinding *IrGenerator::statsBindingOf(ast::Expr &e) {
  auto *s = dynamic_cast<ast::Symbol *>(&e);
  if (!s || !s->local)
    return nullptr;
  auto it = fs_.statsValues.find(s->local);
  return it == fs_.statsValues.end() ? nullptr : &it->second;
}

void IrGenerator::visit(ast::ArrayIndex &a) {
  if (a.hist) {
    llvm::Value *index = evalLong(*a.indexes.at(0));
    result_ = {histogramBucket(*a.hist, index, a.tok), ast::Type::Long};
    return;
  }
  const GlobalSlot *slot = slotOf(a.base->global, a.tok);
  if (!slot)
    return;
  if (slot->desc->value == values::ValueKind::Stats) {
    fail("invalid use of a stats value", a.tok);
    return;
  }
  llvm::Value *map = globalHeader(*a.base->global);
  llvm::Value *keys = evalKeys(*slot, a.indexes, nullptr, a.tok);
  if (slot->desc->value == values::ValueKind::String) {
    llvm::Value *out = stringTemp();
    b_.CreateCall(SONDE_RT(b_, sonde_map_get_string), {map, keys, out});
    result_ = {out, ast::Type::String};
    return;
  }
  result_ = {b_.CreateCall(SONDE_RT(b_, sonde_map_get_long), {map, keys}, a.base->name),
             ast::Type::Long};
}

// `k in a`, `[k, *] in a`; `i in @hist_*(s)` is true when bucket i is non-zero.
void IrGenerator::visit(ast::InExpr &e) {
  if (e.hist) {
    llvm::Value *bucket = histogramBucket(*e.hist, evalLong(*e.keys.at(0)), e.tok);
    result_ = {toI64(b_.CreateICmpNE(bucket, b_.constLong(0))), ast::Type::Long};
    return;
  }
  const GlobalSlot *slot = slotOf(e.base->global, e.tok);
  if (!slot)
    return;
  llvm::Value *map = globalHeader(*e.base->global);
  uint32_t wild = 0;
  llvm::Value *keys = evalKeys(*slot, e.keys, &wild, e.tok);
  llvm::Value *found =
      wild ? b_.CreateCall(SONDE_RT(b_, sonde_map_exists_wild), {map, keys, b_.constU32(wild)})
           : b_.CreateCall(SONDE_RT(b_, sonde_map_exists), {map, keys});
  result_ = {toI64(b_.CreateICmpNE(found, b_.getInt32(0))), ast::Type::Long};
}

llvm::Value *IrGenerator::extractStat(ast::Expr &aggregate, int32_t extractor, const Token &tok) {
  llvm::Value *out = b_.entryAlloca(b_.longTy(), "stat");
  llvm::Value *ext = b_.getInt32(extractor);
  llvm::Value *st = nullptr;
  if (const StatsBinding *binding = statsBindingOf(aggregate)) {
    st = b_.CreateCall(SONDE_RT(b_, sonde_iter_stats_extract), {binding->iterator, ext, out});
  } else if (auto *a = dynamic_cast<ast::ArrayIndex *>(&aggregate); a && a->base) {
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return b_.constLong(0);
    llvm::Value *keys = evalKeys(*slot, a->indexes, nullptr, a->tok);
    st = b_.CreateCall(SONDE_RT(b_, sonde_map_stats_extract),
                       {globalHeader(*a->base->global), keys, ext, out});
  } else if (auto *s = dynamic_cast<ast::Symbol *>(&aggregate); s && s->global) {
    if (!slotOf(s->global, s->tok))
      return b_.constLong(0);
    st = b_.CreateCall(SONDE_RT(b_, sonde_stats_extract), {globalHeader(*s->global), ext, out});
  } else {
    fail("invalid operand of a stats extractor", tok);
    return b_.constLong(0);
  }
  raiseStatusIfFailed(st, tok);
  return b_.CreateLoad(b_.longTy(), out);
}

void IrGenerator::visit(ast::StatOp &e) {
  result_ = {extractStat(*e.operand, extractorOf(e.fn), e.tok), ast::Type::Long};
}

llvm::Value *IrGenerator::histogramBucket(ast::HistOp &h, llvm::Value *index, const Token &tok) {
  llvm::Value *out = b_.entryAlloca(b_.longTy(), "bucket");
  llvm::Value *st = nullptr;
  if (const StatsBinding *binding = statsBindingOf(*h.operand)) {
    llvm::Value *map = globalHeader(*binding->loop->base->global);
    st = b_.CreateCall(SONDE_RT(b_, sonde_map_stats_bucket),
                       {map, currentKeys(*binding), index, out});
  } else if (auto *a = dynamic_cast<ast::ArrayIndex *>(h.operand.get()); a && a->base) {
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return b_.constLong(0);
    llvm::Value *keys = evalKeys(*slot, a->indexes, nullptr, a->tok);
    st = b_.CreateCall(SONDE_RT(b_, sonde_map_stats_bucket),
                       {globalHeader(*a->base->global), keys, index, out});
  } else if (auto *s = dynamic_cast<ast::Symbol *>(h.operand.get()); s && s->global) {
    if (!slotOf(s->global, s->tok))
      return b_.constLong(0);
    st = b_.CreateCall(SONDE_RT(b_, sonde_stats_bucket), {globalHeader(*s->global), index, out});
  } else {
    fail("invalid operand of a histogram", tok);
    return b_.constLong(0);
  }
  raiseStatusIfFailed(st, tok);
  return b_.CreateLoad(b_.longTy(), out);
}

// A merged copy of stats (for iterating histogram buckets). The summary is
// zeroed first, so a missing array entry reads as no buckets; an empty
// aggregate is not an error here.
llvm::Value *IrGenerator::statsSummary(ast::Expr &aggregate, const Token &tok) {
  auto *type = llvm::ArrayType::get(b_.longTy(), sizeof(sonde_stat_summary) / 8);
  llvm::AllocaInst *summary = b_.entryAlloca(type, "summary");
  b_.CreateMemSet(summary, b_.getInt8(0), sizeof(sonde_stat_summary), llvm::MaybeAlign(8));
  llvm::Value *st = nullptr;
  if (const StatsBinding *binding = statsBindingOf(aggregate)) {
    st = b_.CreateCall(SONDE_RT(b_, sonde_iter_stats_summary), {binding->iterator, summary});
  } else if (auto *a = dynamic_cast<ast::ArrayIndex *>(&aggregate); a && a->base) {
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return summary;
    llvm::Value *keys = evalKeys(*slot, a->indexes, nullptr, a->tok);
    st = b_.CreateCall(SONDE_RT(b_, sonde_map_stats_summary),
                       {globalHeader(*a->base->global), keys, summary});
  } else if (auto *s = dynamic_cast<ast::Symbol *>(&aggregate); s && s->global) {
    if (!slotOf(s->global, s->tok))
      return summary;
    st = b_.CreateCall(SONDE_RT(b_, sonde_stats_summary), {globalHeader(*s->global), summary});
  } else {
    fail("invalid operand of a histogram", tok);
    return summary;
  }
  st = b_.CreateSelect(b_.CreateICmpEQ(st, b_.getInt32(SONDE_ERR_EMPTY_AGGREGATE)),
                       b_.getInt32(SONDE_OK), st);
  raiseStatusIfFailed(st, tok);
  return summary;
}

} // namespace sonde::codegen
