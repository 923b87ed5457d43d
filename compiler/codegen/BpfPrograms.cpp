#include "codegen/BpfPrograms.h"

#include "probes/tracepoint/KernelBtf.h"
#include "probes/tracepoint/SyscallDispatch.h"
#include "runtime/bpf/BpfAbi.h"

#include <llvm/IR/DIBuilder.h>

#include <algorithm>
#include <string>

namespace sonde::codegen {

llvm::DILocation *describeProgram(llvm::Module &m, llvm::Function *fn, llvm::DISubprogram &at) {
  llvm::DIBuilder di(m, true, at.getUnit());
  llvm::Metadata *types[] = {di.createBasicType("int", 32, llvm::dwarf::DW_ATE_signed),
                             di.createPointerType(nullptr, 64)};
  auto *sp =
      di.createFunction(at.getUnit(), fn->getName(), fn->getName(), at.getFile(), at.getLine(),
                        di.createSubroutineType(di.getOrCreateTypeArray(types)), at.getLine(),
                        llvm::DINode::FlagPrototyped, llvm::DISubprogram::SPFlagDefinition);
  // The kernel wants a global function's parameters named in its BTF.
  di.createParameterVariable(sp, "ctx", 1, at.getFile(), at.getLine(),
                             di.createPointerType(nullptr, 64), true);
  fn->setSubprogram(sp);
  di.finalizeSubprogram(sp);
  return llvm::DILocation::get(m.getContext(), at.getLine(), 0, sp);
}

void emitSyscallDispatchers(RuntimeBuilder &b, const std::vector<BpfTarget::Entry> &entries) {
  llvm::Module &m = b.module();
  namespace tp = probes::tracepoint;
  std::vector<tp::TracepointProgram> programs;
  for (const BpfTarget::Entry &e : entries)
    programs.push_back({e.probeIndex, e.system, e.event, e.format, e.readsArguments});
  std::vector<tp::SyscallSlot> slots = tp::planSyscallDispatch(programs);
  std::string why;
  const tp::KernelBtf *btf = slots.empty() ? nullptr : tp::KernelBtf::running(&why);
  if (!btf || !btf->memberOffset("task_struct", "thread_info") ||
      !btf->memberOffset("thread_info", "status"))
    return;
  llvm::DISubprogram *line = nullptr;
  for (const BpfTarget::Entry &e : entries)
    if (!line)
      line = e.handler->getSubprogram();
  for (uint32_t exit = 0; exit < 2; ++exit) {
    if (std::none_of(slots.begin(), slots.end(), [exit](const tp::SyscallSlot &s) {
          return static_cast<uint32_t>(s.direction) == exit;
        }))
      continue;
    const char *event = exit ? "sys_exit" : "sys_enter";
    auto *type = llvm::FunctionType::get(b.getInt32Ty(), {b.ptrTy()}, false);
    auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                      std::string("sonde_dispatch_") + event, m);
    fn->setSection(std::string("tracepoint/raw_syscalls/") + event);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", fn));
    if (line)
      b.SetCurrentDebugLocation(describeProgram(m, fn, *line));
    b.CreateRet(
        b.CreateCall(SONDE_RT(b, sonde_bpf_syscall_dispatch), {fn->getArg(0), b.constU32(exit)}));
  }
  auto *i32 = llvm::Type::getInt32Ty(m.getContext());
  std::vector<llvm::Constant *> words;
  for (const tp::SyscallSlot &s : slots) {
    words.push_back(llvm::ConstantInt::get(i32, s.probeIndex));
    words.push_back(llvm::ConstantInt::get(i32, static_cast<uint32_t>(s.direction)));
    words.push_back(llvm::ConstantInt::get(i32, s.number));
  }
  auto *tableType = llvm::ArrayType::get(i32, words.size());
  auto *table =
      new llvm::GlobalVariable(m, tableType, true, llvm::GlobalValue::ExternalLinkage,
                               llvm::ConstantArray::get(tableType, words), "sonde_syscall_slots");
  table->setSection(".rodata");
}

} // namespace sonde::codegen
