// What targets share: globals at their GlobalLayout offsets from the state base.
#include "codegen/CodegenTarget.h"

#include "codegen/RuntimeBuilder.h"
#include "codegen/ScriptFacts.h"

namespace sonde::codegen {

llvm::Value *CodegenTarget::globalData(RuntimeBuilder &b, llvm::Value *base,
                                       const GlobalSlot &slot) {
  return b.bytePtr(base, slot.placement.dataOffset, slot.desc->name);
}

llvm::Value *CodegenTarget::globalHeader(RuntimeBuilder &b, llvm::Value *base,
                                         const GlobalSlot &slot) {
  return b.bytePtr(base, slot.placement.offset, slot.desc->name);
}

} // namespace sonde::codegen
