// Handlers, user functions, locals and the machinery every construct shares:
// scopes, error landings, runtime errors and the MAXACTION budget.
#include "codegen/IrGenerator.h"

#include "codegen/DeadLocalStores.h"
#include "codegen/SourceLines.h"

#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/ModuleAbi.h"

#include <llvm/IR/MDBuilder.h>

#include <unordered_set>

namespace sonde::codegen {

namespace {

// Deeper than the call chains of tapsets and scripts in practice, where inlining
// pays; shallow enough that inlining stays linear in the chain's length.
constexpr int64_t kMaxInlinedChain = 16;

} // namespace

IrGenerator::IrGenerator(const ScriptFacts &facts, ModuleTables &tables, llvm::Module &m,
                         CodegenTarget &target, const CodegenOptions &opts, DiagnosticEngine &diags)
    : facts_(facts), tables_(tables), module_(m), target_(target), opts_(opts), diags_(diags),
      b_(m, target), strCap_(opts.limits.max_string_len) {}

IrGenerator::~IrGenerator() = default;

bool IrGenerator::generate() {
  if (target_.inKernel())
    lines_ = std::make_unique<SourceLines>(module_);
  for (const ast::FunctionDecl *f : facts_.functions())
    functions_[f] = declareFunction(*f);
  for (size_t i = 0; i < facts_.probes().size(); ++i) {
    const EmittedProbe &p = facts_.probes()[i];
    bool kernel = p.info.kind == SONDE_PROBE_KERNEL_TRACE;
    readsArguments_ = p.probe && readsTracepointArguments(*p.probe);
    argumentReaders_.push_back(readsArguments_);
    handlers_.push_back(kernel == target_.inKernel() ? emitHandler(p, i) : nullptr);
  }
  // Functions the emitted handlers call, and the ones those call: the native
  // and the kernel module each get only their own.
  std::unordered_set<const ast::FunctionDecl *> emitted;
  for (bool more = true; more;) {
    more = false;
    for (const ast::FunctionDecl *f : facts_.functions())
      if (!emitted.count(f) && !functions_.at(f)->use_empty()) {
        emitFunction(*f);
        emitted.insert(f);
        more = true;
      }
  }
  for (const ast::FunctionDecl *f : facts_.functions())
    if (!emitted.count(f))
      functions_.at(f)->eraseFromParent();
  if (!target_.inKernel())
    initGlobals_ = emitGlobalInitializer();
  if (lines_)
    lines_->finish();
  return ok_;
}

void IrGenerator::fail(const std::string &msg, const Token &tok) {
  diags_.semanticError(msg, tok);
  ok_ = false;
}

// ------------------------------------------------------------------ functions

// long f(ctx, params...) / void f(ctx, char *out, params...) for string results;
// a function that uses `next` also takes the int32 its caller tests afterwards.
llvm::Function *IrGenerator::declareFunction(const ast::FunctionDecl &f) {
  std::vector<llvm::Type *> params{b_.ptrTy()};
  if (f.returnType == ast::Type::String)
    params.push_back(b_.ptrTy());
  for (size_t i = 0; i < f.params.size(); ++i)
    params.push_back(f.locals[i]->type == ast::Type::String ? static_cast<llvm::Type *>(b_.ptrTy())
                                                            : b_.longTy());
  if (facts_.usesNext(f))
    params.push_back(b_.ptrTy());
  llvm::Type *ret =
      f.returnType == ast::Type::Long ? static_cast<llvm::Type *>(b_.longTy()) : b_.getVoidTy();
  auto *type = llvm::FunctionType::get(ret, params, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, "function." + f.name,
                                    module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // LLVM inlines a function called once into its caller whatever its size, and
  // then simplifies the caller again: along a chain of such functions (f0 calls
  // f1 calls f2 ...) every link would get the whole rest of the chain, time
  // quadratic in its length. Only the last links of a long chain are inlined.
  if (facts_.callHeight(f) > kMaxInlinedChain)
    fn->addFnAttr(llvm::Attribute::NoInline);
  return fn;
}

void IrGenerator::emitFunction(const ast::FunctionDecl &f) {
  llvm::Function *fn = functions_.at(&f);
  auto arg = fn->arg_begin();
  fs_ = FunctionState{};
  fs_.decl = &f;
  probe_ = nullptr;
  llvm::Value *ctx = &*arg++;
  beginBody(fn, ctx);
  describeLines(*fn, f.tok);
  if (f.returnType == ast::Type::String) {
    fs_.returnOut = &*arg++;
    b_.CreateStore(b_.getInt8(0), fs_.returnOut);
  } else if (f.returnType == ast::Type::Long) {
    fs_.returnSlot = b_.entryAlloca(b_.longTy(), "retval");
    b_.CreateStore(b_.constLong(0), fs_.returnSlot);
  }
  // Parameters are locals the caller initialised: by value, so strings are copied.
  declareLocals(f.locals, f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ast::LocalVar &p = *f.locals[i];
    llvm::Value *v = &*arg++;
    if (p.type == ast::Type::String) {
      llvm::Value *buf = target_.newStringBuffer(b_, strCap_);
      target_.copyString(b_, buf, v, strCap_);
      fs_.locals[&p] = buf;
    } else {
      llvm::Value *slot = b_.entryAlloca(b_.longTy(), p.name);
      b_.CreateStore(v, slot);
      fs_.locals[&p] = slot;
    }
  }
  if (facts_.usesNext(f))
    fs_.nextFlag = &*arg++;
  deadStores_ = deadLocalStores(*f.body, nullptr);
  emitStatement(*f.body);
  finishBody(f.body->tok);

  b_.SetInsertPoint(fs_.exit);
  if (fs_.returnSlot)
    b_.CreateRet(b_.CreateLoad(b_.longTy(), fs_.returnSlot));
  else
    b_.CreateRetVoid();
}

// ------------------------------------------------------------------ handlers

llvm::Function *IrGenerator::emitHandler(const EmittedProbe &p, size_t index) {
  auto *type = llvm::FunctionType::get(b_.getVoidTy(), {b_.ptrTy()}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                    "probe." + std::to_string(index), module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fs_ = FunctionState{};
  probe_ = &p;
  beginBody(fn, &*fn->arg_begin());
  if (p.probe && p.probe->origin)
    describeLines(*fn, p.probe->origin->tok);

  llvm::BasicBlock *body = newBlock("body");
  if (p.info.checksSessionRunning) {
    llvm::Value *running = b_.CreateCall(SONDE_RT(b_, sonde_session_running), {fs_.base});
    llvm::BasicBlock *stopped = newBlock("not.running");
    llvm::BasicBlock *next = newBlock("running");
    b_.CreateCondBr(b_.CreateICmpNE(running, b_.getInt32(0)), next, stopped);
    b_.SetInsertPoint(stopped);
    b_.CreateRetVoid();
    b_.SetInsertPoint(next);
  }
  // -t: the run is timed from here (a run the session skips is not a hit) to the
  // handler's one exit, locks included.
  std::optional<uint32_t> timing = facts_.timingGlobal(index);
  llvm::Value *startNs = nullptr;
  if (timing) {
    startNs = b_.entryAlloca(b_.longTy(), "timing.start");
    b_.CreateStore(readClockNs(), startNs);
  }
  llvm::Value *lockTable = nullptr;
  auto lockCount = static_cast<uint32_t>(p.lockOffsets.size());
  if (lockCount) {
    auto *arrayTy = llvm::ArrayType::get(b_.longTy(), lockCount);
    std::vector<llvm::Constant *> offsets;
    for (uint64_t off : p.lockOffsets)
      offsets.push_back(b_.getInt64(off));
    lockTable = new llvm::GlobalVariable(module_, arrayTy, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(arrayTy, offsets), "locks");
    llvm::Value *st = b_.CreateCall(SONDE_RT(b_, sonde_locks_take),
                                    {fs_.base, lockTable, b_.constU32(lockCount)});
    llvm::BasicBlock *skipped = newBlock("skipped");
    b_.CreateCondBr(b_.CreateICmpEQ(st, b_.getInt32(SONDE_OK)), body, skipped);
    b_.SetInsertPoint(skipped);
    b_.CreateCall(SONDE_RT(b_, sonde_session_note_skipped), {fs_.base});
    b_.CreateRetVoid();
  } else {
    b_.CreateBr(body);
  }

  b_.SetInsertPoint(body);
  declareLocals(p.probe->locals, 0);
  deadStores_ = deadLocalStores(*p.probe->body, p.probe->condition.get());
  if (p.probe->condition) {
    llvm::BasicBlock *run = newBlock("condition.true");
    b_.CreateCondBr(evalCondition(*p.probe->condition), run, fs_.exit);
    checkTargetSupport(p.probe->condition->tok);
    b_.SetInsertPoint(run);
  }
  emitStatement(*p.probe->body);
  finishBody(p.probe->body->tok);

  b_.SetInsertPoint(fs_.exit);
  if (lockTable)
    b_.CreateCall(SONDE_RT(b_, sonde_locks_release), {fs_.base, lockTable, b_.constU32(lockCount)});
  if (timing) {
    GlobalSlot slot{*timing, facts_.layout().placements()[*timing],
                    &facts_.layout().globals()[*timing]};
    llvm::Value *elapsed = b_.CreateSub(readClockNs(), b_.CreateLoad(b_.longTy(), startNs));
    b_.CreateCall(SONDE_RT(b_, sonde_stats_add),
                  {target_.globalHeader(b_, fs_.base, slot), elapsed});
  }
  b_.CreateRetVoid();
  probe_ = nullptr;
  return fn;
}

// CLOCK_MONOTONIC in ns (bpf_ktime_get_ns() in the kernel), for -t.
llvm::Value *IrGenerator::readClockNs() {
  return b_.CreateCall(SONDE_RT(b_, sonde_fn_local_clock_ns_0),
                       {fs_.ctx, b_.constU32(SONDE_NO_LOCATION)});
}

// `global x = 5` and -G: stored once into a new segment, before begin probes.
llvm::Function *IrGenerator::emitGlobalInitializer() {
  if (facts_.initialValues().empty())
    return nullptr;
  auto *type = llvm::FunctionType::get(b_.getVoidTy(), {b_.ptrTy()}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, "sonde.init_globals",
                                    module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fs_ = FunctionState{};
  beginBody(fn, &*fn->arg_begin());
  for (const InitialValue &iv : facts_.initialValues()) {
    const values::GlobalPlacement &place = facts_.layout().placements()[iv.layoutIndex];
    llvm::Value *addr = b_.bytePtr(fs_.base, place.dataOffset);
    if (iv.type == ast::Type::String)
      target_.copyString(b_, addr, stringLiteral(iv.text), strCap_);
    else
      b_.CreateStore(b_.constLong(iv.number), addr);
  }
  b_.CreateBr(fs_.exit);
  b_.SetInsertPoint(fs_.exit);
  b_.CreateRetVoid();
  return fn;
}

void IrGenerator::beginBody(llvm::Function *fn, llvm::Value *ctx) {
  fs_.fn = fn;
  fs_.ctx = ctx;
  b_.SetInsertPoint(llvm::BasicBlock::Create(module_.getContext(), "entry", fn));
  fs_.exit = newBlock("exit");
  fs_.base = target_.stateBase(b_, ctx);
}

// Locals start as 0 / "" on every handler run and call. `skip` leading locals
// (function parameters) are initialised by the caller instead.
void IrGenerator::declareLocals(const std::vector<std::unique_ptr<ast::LocalVar>> &locals,
                                size_t skip) {
  for (size_t i = skip; i < locals.size(); ++i) {
    const ast::LocalVar &v = *locals[i];
    if (v.type == ast::Type::Stats)
      continue; // a foreach value variable over stats: bound to the loop's iterator
    llvm::Value *slot = localSlot(v);
    if (v.type == ast::Type::String)
      b_.CreateStore(b_.getInt8(0), slot);
    else
      b_.CreateStore(b_.constLong(0), slot);
  }
}

llvm::Value *IrGenerator::localSlot(const ast::LocalVar &v) {
  auto it = fs_.locals.find(&v);
  if (it != fs_.locals.end())
    return it->second;
  llvm::Value *slot = v.type == ast::Type::String
                          ? target_.newStringBuffer(b_, strCap_)
                          : static_cast<llvm::Value *>(b_.entryAlloca(b_.longTy(), v.name));
  fs_.locals[&v] = slot;
  return slot;
}

void IrGenerator::finishBody(const Token &endTok) {
  recordActions(0, endTok, true);
  b_.CreateBr(fs_.exit);
}

// Temporaries do not outlive their statement, so each statement reuses the
// string buffers of the ones before it (as stap overlays its temporaries).
llvm::Value *IrGenerator::stringTemp() {
  if (fs_.stringPoolUsed == fs_.stringPool.size())
    fs_.stringPool.push_back(target_.newStringBuffer(b_, strCap_));
  return fs_.stringPool[fs_.stringPoolUsed++];
}

llvm::Value *IrGenerator::statementArray(llvm::ArrayType *type, const llvm::Twine &name) {
  llvm::AllocaInst *array = b_.entryAlloca(type, name);
  b_.CreateLifetimeStart(array, b_.getInt64(module_.getDataLayout().getTypeAllocSize(type)));
  fs_.statementArrays.push_back(array);
  return array;
}

// Kernel modules carry line information (SourceLines): from here on, what is
// emitted in `fn` is at `tok`.
void IrGenerator::describeLines(llvm::Function &fn, const Token &tok) {
  if (!lines_)
    return;
  lines_->describe(fn, tok, static_cast<unsigned>(fn.arg_size()), false);
  b_.SetCurrentDebugLocation(lines_->at(fn, tok));
}

void IrGenerator::emitStatement(ast::Stmt &s) {
  if (lines_ && fs_.fn && fs_.fn->getSubprogram())
    b_.SetCurrentDebugLocation(lines_->at(*fs_.fn, s.tok));
  // What is pending here came from the enclosing statement's own header (a
  // foreach, a loop condition), not from this one.
  if (statementTok_)
    checkTargetSupport(*statementTok_);
  const Token *outer = std::exchange(statementTok_, &s.tok);
  size_t mark = fs_.stringPoolUsed, arrays = fs_.statementArrays.size();
  s.accept(*this);
  fs_.stringPoolUsed = mark;
  for (size_t i = arrays; i < fs_.statementArrays.size(); ++i) {
    llvm::AllocaInst *array = fs_.statementArrays[i];
    b_.CreateLifetimeEnd(
        array, b_.getInt64(module_.getDataLayout().getTypeAllocSize(array->getAllocatedType())));
  }
  fs_.statementArrays.resize(arrays);
  checkTargetSupport(s.tok);
  statementTok_ = outer;
}

// The innermost statement that used something the target cannot run is named.
void IrGenerator::checkTargetSupport(const Token &tok) {
  std::string construct = target_.takeUnsupported();
  // A foreach's end is refused at the same place as its beginning: say it once.
  if (!construct.empty() && refused_.emplace(construct, &tok).second)
    fail(construct + " is not supported in kernel probes", tok);
}

llvm::BasicBlock *IrGenerator::newBlock(const llvm::Twine &name) {
  return llvm::BasicBlock::Create(module_.getContext(), name, fs_.fn);
}

// After an unconditional jump: code that follows is unreachable but still needs
// a block to go into.
void IrGenerator::startDeadBlock() { b_.SetInsertPoint(newBlock("dead")); }

// ------------------------------------------------------------------ scopes and errors

void IrGenerator::leaveScopesDownTo(size_t depth) {
  for (size_t i = fs_.scopes.size(); i > depth; --i)
    if (llvm::Value *it = fs_.scopes[i - 1].iterator)
      b_.CreateCall(SONDE_RT(b_, sonde_foreach_end), {it});
}

llvm::BasicBlock *IrGenerator::errorLanding() {
  llvm::BasicBlock *&cache = fs_.scopes.empty() ? fs_.landing : fs_.scopes.back().landing;
  if (cache)
    return cache;
  size_t tryDepth = 0;
  llvm::BasicBlock *target = fs_.exit;
  for (size_t i = fs_.scopes.size(); i > 0; --i)
    if (fs_.scopes[i - 1].kind == Scope::Kind::Try) {
      tryDepth = i;
      target = fs_.scopes[i - 1].catchTo;
      break;
    }
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  cache = newBlock("error");
  b_.SetInsertPoint(cache);
  leaveScopesDownTo(tryDepth);
  b_.CreateBr(target);
  return cache;
}

void IrGenerator::branchOnError() {
  llvm::Value *err = b_.loadContextI32(fs_.ctx, offsetof(sonde_context, error), "error");
  llvm::BasicBlock *ok = newBlock("ok");
  llvm::MDBuilder md(module_.getContext());
  b_.CreateCondBr(b_.CreateICmpNE(err, b_.getInt32(0)), errorLanding(), ok,
                  md.createUnlikelyBranchWeights());
  b_.SetInsertPoint(ok);
}

void IrGenerator::raise(int32_t status, const Token &tok) {
  b_.CreateCall(SONDE_RT(b_, sonde_raise), {fs_.ctx, b_.getInt32(status), b_.constU32(loc(tok))});
  b_.CreateBr(errorLanding());
  startDeadBlock();
}

void IrGenerator::raiseIf(llvm::Value *cond, int32_t status, const Token &tok) {
  llvm::BasicBlock *raising = newBlock("raise");
  llvm::BasicBlock *ok = newBlock("ok");
  llvm::MDBuilder md(module_.getContext());
  b_.CreateCondBr(cond, raising, ok, md.createUnlikelyBranchWeights());
  b_.SetInsertPoint(raising);
  raise(status, tok);
  b_.CreateBr(ok); // the dead block raise() left behind
  b_.SetInsertPoint(ok);
}

// A sonde_status from a value function: MAP_FULL on `map` names that map's limit.
void IrGenerator::raiseStatusIfFailed(llvm::Value *status, const Token &tok, llvm::Value *map) {
  llvm::BasicBlock *failed = newBlock("failed");
  llvm::BasicBlock *ok = newBlock("ok");
  llvm::MDBuilder md(module_.getContext());
  b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(SONDE_OK)), failed, ok,
                  md.createUnlikelyBranchWeights());
  b_.SetInsertPoint(failed);
  llvm::Value *where = b_.constU32(loc(tok));
  if (map) {
    llvm::BasicBlock *full = newBlock("map.full");
    llvm::BasicBlock *other = newBlock("failed.other");
    b_.CreateCondBr(b_.CreateICmpEQ(status, b_.getInt32(SONDE_ERR_MAP_FULL)), full, other);
    b_.SetInsertPoint(full);
    b_.CreateCall(SONDE_RT(b_, sonde_raise_map_full), {fs_.ctx, map, where});
    b_.CreateBr(errorLanding());
    b_.SetInsertPoint(other);
  }
  b_.CreateCall(SONDE_RT(b_, sonde_raise), {fs_.ctx, status, where});
  b_.CreateBr(errorLanding());
  b_.SetInsertPoint(ok);
}

// stap's accounting (translate.cxx record_actions): actions queue up and are
// charged at the end of basic blocks, or every 10, naming the token at hand.
// Running out is uncatchable.
void IrGenerator::recordActions(unsigned n, const Token &tok, bool update) {
  fs_.pendingActions += n;
  if (opts_.limits.suppress_time_limits) {
    fs_.pendingActions = 0;
    return;
  }
  if (!((update && fs_.pendingActions > 0) || fs_.pendingActions >= 10))
    return;
  llvm::Value *field = b_.contextField(fs_.ctx, offsetof(sonde_context, actions_left));
  llvm::Value *left =
      b_.CreateSub(b_.CreateLoad(b_.longTy(), field), b_.constLong(fs_.pendingActions), "actions");
  b_.CreateStore(left, field);
  fs_.pendingActions = 0;
  llvm::BasicBlock *exhausted = newBlock("maxaction");
  llvm::BasicBlock *ok = newBlock("ok");
  llvm::MDBuilder md(module_.getContext());
  b_.CreateCondBr(b_.CreateICmpSLE(left, b_.constLong(0)), exhausted, ok,
                  md.createUnlikelyBranchWeights());
  b_.SetInsertPoint(exhausted);
  b_.CreateStore(b_.getInt32(1), b_.contextField(fs_.ctx, offsetof(sonde_context, uncatchable)));
  raise(SONDE_ERROR_MAXACTION, tok);
  b_.CreateBr(ok);
  b_.SetInsertPoint(ok);
}

} // namespace sonde::codegen
