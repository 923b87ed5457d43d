// The BPF target: kernel.trace handlers become one BPF program per probe in an
// ELF object that sonde loads with libbpf (probes/tracepoint/KernelProbeSet).
// The IR generator is the same as for native handlers; this target maps its
// runtime calls onto the BPF runtime (runtime/bpf/BpfRuntime.bpf.c, linked in
// as bitcode), keeps strings in a per-CPU scratch map, scalars in `.bss`,
// arrays and aggregates in hash maps, and printf in ring-buffer records.
#pragma once

#include "codegen/CodegenTarget.h"
#include "probes/tracepoint/TracepointFormat.h"
#include "runtime/bpf/KernelStateShape.h"

#include <llvm/IR/Function.h>

#include <optional>
#include <string>
#include <vector>

namespace sonde::codegen {

class BpfTarget : public CodegenTarget {
public:
  // A kernel probe's entry: probe table index, handler and tracepoint.
  struct Entry {
    uint32_t probeIndex;
    llvm::Function *handler;
    std::string system, event;
    bool readsArguments = false; // a raw tracepoint program (the C arguments)
    const probes::tracepoint::TracepointFormat *format = nullptr;
    std::string pp, pn; // pp() and pn() of the probe
  };
  // Why finish() failed, and the probe to point at when one is to blame.
  struct FinishError {
    std::string message;
    std::optional<uint32_t> probeIndex;
  };
  // Links the runtime, defines the script's constants and the entry programs,
  // and leaves every other function internal and inlined; `globals` (layout
  // indexes the kernel probes use) are recorded for the loader. False (reason
  // in *error) if the result cannot become BPF.
  virtual bool finish(llvm::Module &m, const std::vector<Entry> &entries,
                      const std::vector<uint32_t> &globals, int64_t maxAction,
                      FinishError *error) = 0;
};

// The BPF target for a script whose globals have this shape, on a kernel with
// this CONFIG_HZ (0: unknown, HZ() is refused); null (message in *error) if
// LLVM lacks the BPF back end.
std::unique_ptr<BpfTarget> makeBpfTarget(const bpf::KernelStateShape &shape, int64_t kernelHz,
                                         std::string *error);

} // namespace sonde::codegen
