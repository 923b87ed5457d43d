// Program-level parts of a BPF module (BpfTarget) beside the probes' entries: a
// program's debug information, and the raw_syscalls dispatchers that run
// syscalls:* probes by call number (probes/tracepoint/SyscallDispatch.h).
#pragma once

#include "codegen/BpfTarget.h"
#include "codegen/RuntimeBuilder.h"

#include <llvm/IR/DebugInfoMetadata.h>

#include <vector>

namespace sonde::codegen {

// Debug information for program `fn`, int (void *ctx), at `at`'s line (the
// kernel wants a program's BTF when the object has any); its first location.
llvm::DILocation *describeProgram(llvm::Module &m, llvm::Function *fn, llvm::DISubprogram &at);

// The dispatcher programs for the `entries` planSyscallDispatch picks, and the
// `sonde_syscall_slots` table the loader fills their prog-array maps from
// (runtime/bpf/BpfAbi.h). Nothing without the kernel BTF offsets that tell
// 32-bit calls apart: the probes then stay on their events.
void emitSyscallDispatchers(RuntimeBuilder &b, const std::vector<BpfTarget::Entry> &entries);

} // namespace sonde::codegen
