// An IRBuilder that knows the runtime: it declares runtime entry points with the
// exact C signatures of the ABI headers (derived from the declarations by
// decltype, so a changed header changes the IR), reaches sonde_context fields
// by their offsetof, and places allocas in the entry block. The IR generator
// uses it so that it reads as the language rather than as LLVM plumbing.
#pragma once

#include "codegen/CodegenTarget.h"
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/ContextAbi.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <type_traits>

namespace sonde::codegen {

// The LLVM type of a C type that crosses the runtime ABI.
template <class T> llvm::Type *abiType(llvm::LLVMContext &c) {
  if constexpr (std::is_void_v<T>)
    return llvm::Type::getVoidTy(c);
  else if constexpr (std::is_pointer_v<T>)
    return llvm::PointerType::getUnqual(c);
  else {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "not an ABI scalar");
    return llvm::Type::getIntNTy(c, sizeof(T) * 8);
  }
}

template <class F> struct AbiSignature;
template <class R, class... A> struct AbiSignature<R(A...)> {
  static llvm::FunctionType *get(llvm::LLVMContext &c) {
    return llvm::FunctionType::get(abiType<R>(c), {abiType<A>(c)...}, false);
  }
};
// libc declares its functions noexcept in C++.
template <class R, class... A> struct AbiSignature<R(A...) noexcept> : AbiSignature<R(A...)> {};

class RuntimeBuilder : public llvm::IRBuilder<> {
public:
  RuntimeBuilder(llvm::Module &m, CodegenTarget &target)
      : llvm::IRBuilder<>(m.getContext()), module_(m), target_(target) {}

  llvm::Module &module() { return module_; }
  CodegenTarget &target() { return target_; }

  llvm::IntegerType *longTy() { return getInt64Ty(); }
  llvm::PointerType *ptrTy() { return getPtrTy(); }
  llvm::ConstantInt *constLong(int64_t v) { return getInt64(static_cast<uint64_t>(v)); }
  llvm::ConstantInt *constU32(uint32_t v) { return getInt32(v); }

  // The runtime function `name` whose C type is Fn: use SONDE_RT(b, fn).
  template <class Fn> llvm::FunctionCallee runtime(llvm::StringRef name) {
    return target_.runtimeFunction(module_, name, AbiSignature<Fn>::get(getContext()));
  }

  // Address of the byte `offset` bytes past `base`.
  llvm::Value *bytePtr(llvm::Value *base, uint64_t offset, const llvm::Twine &name = "") {
    if (offset == 0)
      return base;
    return CreateConstInBoundsGEP1_64(getInt8Ty(), base, offset, name);
  }
  // Address of the sonde_context field at `offset` (use offsetof(sonde_context, f)).
  llvm::Value *contextField(llvm::Value *ctx, size_t offset) { return bytePtr(ctx, offset); }
  llvm::Value *loadContextI32(llvm::Value *ctx, size_t offset, const llvm::Twine &name = "") {
    return CreateLoad(getInt32Ty(), contextField(ctx, offset), name);
  }

  // An alloca at the start of the current function's entry block.
  llvm::AllocaInst *entryAlloca(llvm::Type *type, const llvm::Twine &name = "") {
    llvm::Function *f = GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
    return entry.CreateAlloca(type, nullptr, name);
  }

private:
  llvm::Module &module_;
  CodegenTarget &target_;
};

} // namespace sonde::codegen

// The runtime entry point `fn` (declared in a runtime ABI header) as a callee.
#define SONDE_RT(builder, fn) (builder).runtime<decltype(fn)>(#fn)
