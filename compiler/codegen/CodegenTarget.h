// The one interface behind which code generation keeps everything that depends
// on where handlers run. The IR generator speaks the language (strings, globals,
// output, runtime calls); a target decides how each becomes machine code:
//
// - NativeTarget (now): x86-64 shared objects loaded by sonde and by the agent;
//   strings in stack buffers, globals in the shared segment, runtime calls to the
//   sonde_rt functions exported by the loading process, output through sonde_out_*.
// - BpfTarget (kernel tracepoints): strings in a per-CPU scratch map, globals in
//   BPF maps, runtime calls into the BPF runtime linked in, output as ring-buffer
//   records.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Constant;
class FunctionCallee;
class FunctionType;
class Module;
class StringRef;
class TargetMachine;
class Value;
} // namespace llvm

namespace sonde::codegen {

class RuntimeBuilder;
struct GlobalSlot;

class CodegenTarget {
public:
  virtual ~CodegenTarget() = default;

  // Target triple and data layout of the modules this target builds.
  virtual void prepareModule(llvm::Module &m) = 0;
  // The machine that optimises and compiles for this target (owned by it).
  virtual llvm::TargetMachine &machine() = 0;

  // ---- runtime calls: the callee for a runtime entry point of this C signature.
  virtual llvm::FunctionCallee runtimeFunction(llvm::Module &m, llvm::StringRef name,
                                               llvm::FunctionType *type) = 0;
  // Whether the runtime of this target has the built-in `symbol` (BuiltinAbi.h).
  virtual bool providesBuiltin(const std::string &symbol) = 0;
  // Why this target never provides the built-in `name`, or "" (not yet).
  virtual std::string builtinRefusal(const std::string &name) const {
    (void)name;
    return {};
  }
  // The construct (a runtime entry point's name) used since the last call that
  // this target cannot run, or "" when there was none.
  virtual std::string takeUnsupported() { return {}; }
  // Handlers run in the kernel (no record-time printf arguments, BPF limits).
  virtual bool inKernel() const { return false; }

  // ---- strings (NUL-terminated, at most `cap` bytes including the NUL)
  // A buffer for a string local or temporary, valid for the whole function.
  virtual llvm::Value *newStringBuffer(RuntimeBuilder &b, uint32_t cap) = 0;
  // A constant string (already truncated to cap - 1 bytes by the caller); the
  // same text gives the same constant.
  virtual llvm::Constant *stringConstant(RuntimeBuilder &b, llvm::StringRef text) = 0;
  // dst = src, truncated; src may overlap dst.
  virtual void copyString(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *src, uint32_t cap) = 0;
  // dst .= src, truncated.
  virtual void appendString(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *src,
                            uint32_t cap) = 0;
  // part(0) . part(1) ... part(count - 1) (count >= 2), truncated, in a buffer
  // from temp(). Each part is asked for after the ones before it are copied
  // (its code may change what they pointed at). By default one buffer per
  // operator, as the chain ((a . b) . c) reads.
  virtual llvm::Value *concatStrings(RuntimeBuilder &b, size_t count,
                                     const std::function<llvm::Value *(size_t)> &part,
                                     const std::function<llvm::Value *()> &temp, uint32_t cap);
  // <0, 0, >0 as strcmp (an i32).
  virtual llvm::Value *compareStrings(RuntimeBuilder &b, llvm::Value *lhs, llvm::Value *rhs) = 0;

  // ---- globals: the base every GlobalPlacement offset is relative to.
  virtual llvm::Value *stateBase(RuntimeBuilder &b, llvm::Value *ctx) = 0;
  // A scalar global's storage (int64_t or char[MAXSTRINGLEN]) and an array or
  // stats global's header (sonde_map * / sonde_stats *).
  virtual llvm::Value *globalData(RuntimeBuilder &b, llvm::Value *base, const GlobalSlot &slot);
  virtual llvm::Value *globalHeader(RuntimeBuilder &b, llvm::Value *base, const GlobalSlot &slot);

  // ---- output
  // printf(format #fmt, args): `args` points at SondeFormatArg[argCount].
  struct PrintfCall {
    uint32_t format = 0;
    llvm::Value *args = nullptr;
    uint32_t argCount = 0;
    uint64_t stringMask = 0; // bit i: args[i] is a string
    // How the arguments travel in a binary record (sonde_record_arg_kind, one
    // per argument) when the format can travel as one (TraceSchema::desc).
    std::optional<std::vector<uint8_t>> recordKinds;
    uint32_t loc = 0;
  };
  virtual void emitPrintf(RuntimeBuilder &b, llvm::Value *ctx, const PrintfCall &call) = 0;
  // print/println/printd/printdln: `values` points at SondeValue[count];
  // `delimiter` is a string or null.
  virtual void emitPrintValues(RuntimeBuilder &b, llvm::Value *ctx, llvm::Value *values,
                               uint32_t count, llvm::Value *delimiter, bool newline) = 0;
  virtual void emitPrintChar(RuntimeBuilder &b, llvm::Value *ctx, llvm::Value *c) = 0;
  // print(@hist_*(...)) of scalar stats (keys null) or of map entry keys.
  virtual void emitPrintHistogram(RuntimeBuilder &b, llvm::Value *ctx, llvm::Value *aggregate,
                                  llvm::Value *keys, uint32_t loc) = 0;

  // ---- pass 4: compile a verified, optimised module and link it for loading.
  virtual bool emitObject(llvm::Module &m, const std::string &objectPath, std::string *error) = 0;
  virtual bool link(const std::string &objectPath, const std::string &modulePath,
                    std::string *error) = 0;
  // The file name of a linked module ("module.so").
  virtual const char *moduleFileName() const = 0;
};

// The x86-64 native target; null (message in *error) if LLVM lacks it.
std::unique_ptr<CodegenTarget> makeNativeTarget(unsigned optLevel, std::string *error);

// Writes `m` as an object file with `tm` (`backend` names it in errors).
bool writeObjectFile(llvm::TargetMachine &tm, llvm::Module &m, const std::string &objectPath,
                     const char *backend, std::string *error);

} // namespace sonde::codegen
