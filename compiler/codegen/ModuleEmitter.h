// Pass 4's optimiser and the state GeneratedModule keeps between passes 3 and 4.
#pragma once

#include "codegen/BackendDiagnostics.h"
#include "codegen/Codegen.h"
#include "codegen/CodegenTarget.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>

namespace sonde::codegen {

struct GeneratedModule::Impl {
  std::unique_ptr<CodegenTarget> target;
  std::unique_ptr<llvm::LLVMContext> context; // outlives `module` (declared first)
  std::unique_ptr<llvm::Module> module;
  // Kernel probes, if any: their BPF module (kernel.bpf.o beside module.so).
  std::unique_ptr<CodegenTarget> kernelTarget;
  std::unique_ptr<llvm::Module> kernelModule;
  // Handlers and functions by LLVM name, for what the back ends report.
  FunctionOrigins origins;
};

// Runs the new pass manager's default pipeline for -O<level> (0-3) over `m`.
void optimizeModule(llvm::Module &m, llvm::TargetMachine &machine, unsigned level);

} // namespace sonde::codegen
