// What LLVM's back ends report about the code they compile (the BPF stack
// limit, calls the BPF target cannot make). LLVM's default is to print its own
// words and exit the process, which would leave the build directory behind and
// name no probe. While a BackendDiagnostics is alive, LLVM's errors and
// warnings on its context are collected instead; report() turns them into
// sonde's diagnostics, each naming the probe or function it is about.
#pragma once

#include "ast/Ast.h"
#include "diag/Diagnostics.h"

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace sonde::codegen {

// What a generated function stands for: a probe's handler (or its BPF entry
// program), or a script function.
struct FunctionOrigin {
  std::string what; // `kernel.trace("sched:sched_switch")`, `function f`
  const Token *tok = nullptr;
};
using FunctionOrigins = std::unordered_map<std::string, FunctionOrigin>;

class BackendDiagnostics {
public:
  explicit BackendDiagnostics(llvm::LLVMContext &context);
  ~BackendDiagnostics();
  BackendDiagnostics(const BackendDiagnostics &) = delete;
  BackendDiagnostics &operator=(const BackendDiagnostics &) = delete;

  // Reports what was collected about `m` (compiled for `target`, "BPF" or
  // "native") and forgets it; false if any was an error.
  bool report(const llvm::Module &m, const char *target, const FunctionOrigins &origins,
              DiagnosticEngine &diags);

private:
  struct Entry {
    bool error = false;
    std::string function; // empty when LLVM named none
    std::string message;
  };
  static void collect(const llvm::DiagnosticInfo *info, void *self);

  llvm::LLVMContext &context_;
  llvm::DiagnosticHandler::DiagnosticHandlerTy previous_;
  void *previousContext_;
  std::vector<Entry> entries_;
};

} // namespace sonde::codegen
