// Debug line information for the kernel (BPF) module: LLVM turns it into BTF
// line info, so the kernel's verifier names the script's lines in its log
// (`; printf(...) @ app.probe:7`) and a refused program points at the line.
#pragma once

#include "ast/Source.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/DebugLoc.h>

#include <map>
#include <memory>

namespace sonde::codegen {

class SourceLines {
public:
  explicit SourceLines(llvm::Module &m);
  // Gives `f` (taking `params` pointers, returning void or int) a subprogram
  // at `tok`, the scope of the locations in it.
  void describe(llvm::Function &f, const Token &tok, unsigned params, bool returnsInt);
  // Where `tok` is, in `f` (described before).
  llvm::DebugLoc at(const llvm::Function &f, const Token &tok) const;
  // Completes the debug information; called once, after the last function.
  void finish();

private:
  llvm::DIFile *fileOf(const Token &tok);

  llvm::Module &module_;
  llvm::DIBuilder di_;
  llvm::DICompileUnit *unit_ = nullptr;
  std::map<const SourceFile *, llvm::DIFile *> files_;
};

} // namespace sonde::codegen
