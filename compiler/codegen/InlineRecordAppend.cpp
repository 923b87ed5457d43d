#include "codegen/InlineRecordAppend.h"

#include "codegen/RuntimeBuilder.h"
#include "runtime/session/TraceSchema.h"
#include "runtime/transport/RecordCursor.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <cstddef>

namespace sonde::codegen {

namespace {

// The bytes a record of these kinds may take, a full timestamp before it included:
// what the cursor must have room for (TraceSchema::fixedMaxSize).
uint32_t maxRecordBytes(const std::vector<uint8_t> &kinds) {
  uint32_t bytes = SONDE_RECORD_EXTENDED_SIZE + SONDE_RECORD_HEADER_SIZE;
  for (uint8_t kind : kinds)
    if (kind == SONDE_RECORD_ARG_LONG)
      bytes += SONDE_RECORD_VARINT_MAX;
  return bytes;
}

llvm::Value *cursorField(RuntimeBuilder &b, llvm::Value *cursor, size_t offset) {
  return b.bytePtr(cursor, offset);
}

// Appends `v` as an LEB128 varint at `out` (a loop: 7 bits a byte, the high bit
// set on all but the last); returns the byte after it.
llvm::Value *emitVarint(RuntimeBuilder &b, llvm::Value *out, llvm::Value *v) {
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &c = b.getContext();
  llvm::BasicBlock *entry = b.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(c, "varint.loop", fn);
  auto *more = llvm::BasicBlock::Create(c, "varint.more", fn);
  auto *last = llvm::BasicBlock::Create(c, "varint.last", fn);
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  llvm::PHINode *at = b.CreatePHI(b.ptrTy(), 2, "varint.at");
  llvm::PHINode *rest = b.CreatePHI(b.longTy(), 2, "varint.rest");
  at->addIncoming(out, entry);
  rest->addIncoming(v, entry);
  b.CreateCondBr(b.CreateICmpUGE(rest, b.getInt64(0x80)), more, last);

  b.SetInsertPoint(more);
  b.CreateStore(b.CreateOr(b.CreateTrunc(rest, b.getInt8Ty()), b.getInt8(0x80)), at);
  at->addIncoming(b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), at, 1), more);
  rest->addIncoming(b.CreateLShr(rest, 7), more);
  b.CreateBr(loop);

  b.SetInsertPoint(last);
  b.CreateStore(b.CreateTrunc(rest, b.getInt8Ty()), at);
  return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), at, 1, "varint.end");
}

// Zigzag: small magnitudes of either sign take few varint bytes.
llvm::Value *zigzag(RuntimeBuilder &b, llvm::Value *v) {
  return b.CreateXor(b.CreateShl(v, 1), b.CreateAShr(v, 63), "zigzag");
}

} // namespace

bool appendsInline(const CodegenTarget::PrintfCall &call) {
  if (!call.recordKinds || call.format >= session::TraceSchema::kMaxFormats)
    return false;
  return std::all_of(call.recordKinds->begin(), call.recordKinds->end(), [](uint8_t k) {
    return k == SONDE_RECORD_ARG_LONG || k == SONDE_RECORD_ARG_TIME;
  });
}

void emitInlineRecordAppend(RuntimeBuilder &b, llvm::Value *ctx,
                            const CodegenTarget::PrintfCall &call,
                            const std::function<void()> &emitRuntimeCall) {
  const std::vector<uint8_t> &kinds = *call.recordKinds;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &c = b.getContext();
  llvm::MDNode *likely = llvm::MDBuilder(c).createLikelyBranchWeights();
  auto *check = llvm::BasicBlock::Create(c, "record.check", fn);
  auto *append = llvm::BasicBlock::Create(c, "record.append", fn);
  auto *extended = llvm::BasicBlock::Create(c, "record.fulltime", fn);
  auto *write = llvm::BasicBlock::Create(c, "record.write", fn);
  auto *slow = llvm::BasicBlock::Create(c, "record.call", fn);
  auto *done = llvm::BasicBlock::Create(c, "record.done", fn);

  llvm::Value *cursor = b.CreateLoad(
      b.ptrTy(), b.contextField(ctx, offsetof(sonde_context, record_cursor)), "cursor");
  b.CreateCondBr(b.CreateIsNotNull(cursor), check, slow, likely);

  // Room for the longest form of the record (a null limit gives a negative room).
  b.SetInsertPoint(check);
  llvm::Value *next =
      b.CreateLoad(b.ptrTy(), cursorField(b, cursor, offsetof(sonde_record_cursor, next)), "next");
  llvm::Value *limit = b.CreateLoad(
      b.ptrTy(), cursorField(b, cursor, offsetof(sonde_record_cursor, limit)), "limit");
  llvm::Value *room =
      b.CreateSub(b.CreatePtrToInt(limit, b.longTy()), b.CreatePtrToInt(next, b.longTy()), "room");
  b.CreateCondBr(b.CreateICmpSGE(room, b.getInt64(maxRecordBytes(kinds))), append, slow, likely);

  // The timestamp: a delta from the stream's previous record when it fits the
  // header, else a full-timestamp record first (RecordCodec.h).
  b.SetInsertPoint(append);
  // The line records reach a few dozen events from now, owned early (RecordCursor.h).
  b.CreateIntrinsic(llvm::Intrinsic::prefetch, {b.ptrTy()},
                    {b.bytePtr(next, SONDE_RECORD_PREFETCH_DISTANCE), b.getInt32(1), b.getInt32(3),
                     b.getInt32(1)});
  llvm::Value *now = b.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {}, nullptr, "tsc");
  llvm::Value *lastField = cursorField(
      b, cursor, offsetof(sonde_record_cursor, stream) + offsetof(sonde_record_stream, last));
  llvm::Value *delta = b.CreateSub(now, b.CreateLoad(b.longTy(), lastField), "delta");
  b.CreateCondBr(b.CreateICmpULT(delta, b.getInt64(SONDE_RECORD_DELTA_LIMIT)), write, extended,
                 likely);

  b.SetInsertPoint(extended);
  b.CreateAlignedStore(b.getInt32(SONDE_RECORD_EXTENDED_ID), next, llvm::MaybeAlign(1));
  b.CreateAlignedStore(now, b.bytePtr(next, SONDE_RECORD_HEADER_SIZE), llvm::MaybeAlign(1));
  llvm::Value *afterFullTime = b.bytePtr(next, SONDE_RECORD_EXTENDED_SIZE);
  b.CreateBr(write);

  b.SetInsertPoint(write);
  llvm::PHINode *at = b.CreatePHI(b.ptrTy(), 2, "at");
  at->addIncoming(next, append);
  at->addIncoming(afterFullTime, extended);
  llvm::PHINode *headerDelta = b.CreatePHI(b.longTy(), 2, "header.delta");
  headerDelta->addIncoming(delta, append);
  headerDelta->addIncoming(b.getInt64(0), extended);
  llvm::Value *header =
      b.CreateOr(b.CreateShl(b.CreateTrunc(headerDelta, b.getInt32Ty()), SONDE_RECORD_ID_BITS),
                 b.getInt32(call.format), "header");
  b.CreateAlignedStore(header, at, llvm::MaybeAlign(1));
  llvm::Value *out = b.bytePtr(at, SONDE_RECORD_HEADER_SIZE);
  auto *argsTy = llvm::ArrayType::get(b.longTy(), std::max<size_t>(call.argCount, 1));
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != SONDE_RECORD_ARG_LONG)
      continue; // the record's time: nothing travels
    llvm::Value *arg =
        b.CreateLoad(b.longTy(), b.CreateConstInBoundsGEP2_64(argsTy, call.args, 0, i), "arg");
    out = emitVarint(b, out, zigzag(b, arg));
  }

  // Commit: the cursor, then the slot's bytes (release: the consumer reads the
  // record after it sees them) and its record count.
  b.CreateStore(out, cursorField(b, cursor, offsetof(sonde_record_cursor, next)));
  b.CreateStore(now, lastField);
  llvm::Value *base =
      b.CreateLoad(b.ptrTy(), cursorField(b, cursor, offsetof(sonde_record_cursor, base)), "base");
  llvm::Value *used = b.CreateTrunc(
      b.CreateSub(b.CreatePtrToInt(out, b.longTy()), b.CreatePtrToInt(base, b.longTy())),
      b.getInt32Ty(), "used");
  llvm::Value *usedField = b.CreateLoad(
      b.ptrTy(), cursorField(b, cursor, offsetof(sonde_record_cursor, used)), "slot.used");
  b.CreateAlignedStore(used, usedField, llvm::MaybeAlign(4))
      ->setAtomic(llvm::AtomicOrdering::Release);
  llvm::Value *recordsField = b.CreateLoad(
      b.ptrTy(), cursorField(b, cursor, offsetof(sonde_record_cursor, records)), "slot.records");
  llvm::LoadInst *records = b.CreateAlignedLoad(b.getInt32Ty(), recordsField, llvm::MaybeAlign(4));
  records->setAtomic(llvm::AtomicOrdering::Monotonic);
  b.CreateAlignedStore(b.CreateAdd(records, b.getInt32(1)), recordsField, llvm::MaybeAlign(4))
      ->setAtomic(llvm::AtomicOrdering::Monotonic);
  b.CreateBr(done);

  b.SetInsertPoint(slow);
  emitRuntimeCall();
  b.CreateBr(done);

  b.SetInsertPoint(done);
}

} // namespace sonde::codegen
