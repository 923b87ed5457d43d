// What targets share: globals at their GlobalLayout offsets from the state base,
// object files written by a target machine.
#include "codegen/CodegenTarget.h"

#include "codegen/RuntimeBuilder.h"
#include "codegen/ScriptFacts.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace sonde::codegen {

llvm::Value *CodegenTarget::concatStrings(RuntimeBuilder &b, size_t count,
                                          const std::function<llvm::Value *(size_t)> &part,
                                          const std::function<llvm::Value *()> &temp,
                                          uint32_t cap) {
  llvm::Value *left = part(0);
  for (size_t i = 1; i < count; ++i) {
    llvm::Value *out = temp();
    copyString(b, out, left, cap);
    appendString(b, out, part(i), cap);
    left = out;
  }
  return left;
}

llvm::Value *CodegenTarget::globalData(RuntimeBuilder &b, llvm::Value *base,
                                       const GlobalSlot &slot) {
  return b.bytePtr(base, slot.placement.dataOffset, slot.desc->name);
}

llvm::Value *CodegenTarget::globalHeader(RuntimeBuilder &b, llvm::Value *base,
                                         const GlobalSlot &slot) {
  return b.bytePtr(base, slot.placement.offset, slot.desc->name);
}

bool writeObjectFile(llvm::TargetMachine &tm, llvm::Module &m, const std::string &objectPath,
                     const char *backend, std::string *error) {
  std::error_code ec;
  llvm::raw_fd_ostream out(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec) {
    *error = "cannot write '" + objectPath + "': " + ec.message();
    return false;
  }
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    *error = std::string("the ") + backend + " back end cannot emit object files";
    return false;
  }
  pm.run(m);
  out.flush();
  if (out.has_error()) {
    *error = "cannot write '" + objectPath + "': " + out.error().message();
    return false;
  }
  return true;
}

} // namespace sonde::codegen
