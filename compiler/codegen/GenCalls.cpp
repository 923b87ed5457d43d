// Calls: user functions (MAXNESTING, same-arity priority chains with `next`)
// and built-ins by the one rule of runtime/session/BuiltinAbi.h.
#include "codegen/IrGenerator.h"

#include "sema/Builtins.h"

#include <llvm/IR/CFG.h>

namespace sonde::codegen {

void IrGenerator::visit(ast::FunctionCall &c) {
  result_ = c.callees.empty() ? callBuiltin(c) : callUserFunction(c);
}

// Each function of the chain runs in turn until one finishes without `next`;
// `next` in the last one is "all functions exhausted".
Value IrGenerator::callUserFunction(ast::FunctionCall &c) {
  std::vector<llvm::Value *> args;
  for (auto &a : c.args)
    args.push_back(eval(*a).v);
  ast::Type type = c.callees.front()->returnType;
  llvm::Value *out = type == ast::Type::String ? stringTemp() : nullptr;
  llvm::Value *nextFlag = nullptr;
  llvm::BasicBlock *done = newBlock("call.done");
  std::vector<std::pair<llvm::Value *, llvm::BasicBlock *>> results;
  llvm::Value *nesting = b_.contextField(fs_.ctx, offsetof(sonde_context, nesting));
  bool exhausted = true;
  for (const ast::FunctionDecl *f : c.callees) {
    llvm::Value *depth = b_.CreateLoad(b_.getInt32Ty(), nesting, "nesting");
    raiseIf(b_.CreateICmpSGE(depth, b_.getInt32(static_cast<uint32_t>(
                                        std::min<int64_t>(facts_.maxNesting(), INT32_MAX)))),
            SONDE_ERROR_MAXNESTING, f->tok); // stap names the function it could not enter
    b_.CreateStore(b_.CreateAdd(depth, b_.getInt32(1)), nesting);
    std::vector<llvm::Value *> callArgs{fs_.ctx};
    if (out)
      callArgs.push_back(out);
    callArgs.insert(callArgs.end(), args.begin(), args.end());
    bool chained = facts_.usesNext(*f);
    if (chained) {
      if (!nextFlag)
        nextFlag = b_.entryAlloca(b_.getInt32Ty(), "next");
      b_.CreateStore(b_.getInt32(0), nextFlag);
      callArgs.push_back(nextFlag);
    }
    llvm::Value *r = b_.CreateCall(functions_.at(f), callArgs);
    b_.CreateStore(depth, nesting);
    branchOnError();
    if (!chained) {
      results.emplace_back(r, b_.GetInsertBlock());
      b_.CreateBr(done);
      exhausted = false;
      break;
    }
    llvm::BasicBlock *passed = newBlock("call.next");
    results.emplace_back(r, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), nextFlag), b_.getInt32(0)),
                    passed, done);
    b_.SetInsertPoint(passed);
  }
  if (exhausted) {
    raise(SONDE_ERROR_FUNCTIONS_EXHAUSTED, c.tok);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
  if (type == ast::Type::String)
    return {out, ast::Type::String};
  if (type != ast::Type::Long)
    return {b_.constLong(0), ast::Type::Long};
  llvm::PHINode *phi = b_.CreatePHI(b_.longTy(), results.size() + 1, c.name);
  for (auto &[v, block] : results)
    phi->addIncoming(v, block);
  // The dead block after "exhausted" also branches here.
  for (llvm::BasicBlock *pred : llvm::predecessors(done))
    if (phi->getBasicBlockIndex(pred) < 0)
      phi->addIncoming(llvm::PoisonValue::get(b_.longTy()), pred);
  return {phi, ast::Type::Long};
}

namespace {

// Why a built-in this runtime lacks cannot be called here, in one line;
// `why` is the target's own reason, if it has one.
std::string unavailableBuiltin(const sema::BuiltinFunction &bf, bool inKernel,
                               const std::string &why) {
  std::string head = "function '" + std::string(bf.name) + "' ";
  if (!why.empty())
    return head + "is not available " + (inKernel ? "in kernel probes" : "in this runtime") + ": " +
           why;
  if (inKernel && bf.scope == sema::BuiltinScope::User)
    return head + "reads a traced process and is only available in userspace probes";
  if (!inKernel && bf.scope == sema::BuiltinScope::Kernel)
    return head + "reads kernel state and is only available in kernel probes";
  return head + "is not available " + (inKernel ? "in kernel probes" : "in this runtime");
}

} // namespace

// RET sonde_fn_<name>_<argc>(ctx, [char *out,] args..., uint32_t loc), checked
// against what this runtime exports.
Value IrGenerator::callBuiltin(ast::FunctionCall &c) {
  const sema::BuiltinFunction *bf = sema::findBuiltin(c.name, c.args.size());
  if (!bf) {
    fail("unresolved function " + c.name, c.tok);
    return {};
  }
  std::string symbol = SONDE_BUILTIN_PREFIX + c.name + "_" + std::to_string(c.args.size());
  if (!target_.providesBuiltin(symbol)) {
    fail(unavailableBuiltin(*bf, target_.inKernel(), target_.builtinRefusal(c.name)), c.tok);
    return {};
  }
  std::vector<llvm::Type *> params{b_.ptrTy()};
  std::vector<llvm::Value *> args{fs_.ctx};
  llvm::Value *out = nullptr;
  if (bf->returns == 'S') {
    out = stringTemp();
    params.push_back(b_.ptrTy());
    args.push_back(out);
  }
  for (size_t i = 0; i < c.args.size(); ++i) {
    Value v = eval(*c.args[i]);
    params.push_back(v.v->getType());
    args.push_back(v.v);
  }
  params.push_back(b_.getInt32Ty());
  args.push_back(b_.constU32(loc(c.tok)));
  llvm::Type *ret = bf->returns == 'L' ? static_cast<llvm::Type *>(b_.longTy()) : b_.getVoidTy();
  llvm::FunctionCallee fn =
      target_.runtimeFunction(module_, symbol, llvm::FunctionType::get(ret, params, false));
  llvm::Value *r = b_.CreateCall(fn, args);
  branchOnError();
  if (out)
    return {out, ast::Type::String};
  if (bf->returns == 'L')
    return {r, ast::Type::Long};
  return {b_.constLong(0), ast::Type::Long};
}

} // namespace sonde::codegen
