// Which vector state a marker site's handler must preserve, decided from the
// machine code of the ELF object with LLVM's x86 disassembler.
//
// The marker's asm declares no clobbers, so any vector value live in the
// function around it must survive the handler. Saving ymm/zmm0-15 on every hit
// is the largest cost of a hit; xmm0-15 suffice when no wider value can be live:
//  - the function's code (with the parts it jumps to, such as .cold blocks)
//    has no VEX, EVEX or XOP instruction, so it holds no upper halves and
//    nothing in registers 16-31; and
//  - no caller can keep such values across a call to it. Under the ABI every
//    vector register is call-clobbered; only interprocedural register
//    allocation (GCC's -fipa-ra) lets a direct caller keep values in
//    registers the callee never touches. So the function must either never be
//    the target of a direct call or jump from outside itself, or make an
//    opaque call (indirect, through the PLT, or to such a function), which
//    makes it clobber every call-clobbered register as far as callers know.
// xmm0-7 suffice when, besides, no instruction there uses a vector register at
// all: a value can then only pass through in the argument registers (to a tail
// call) or the result registers (from a call, returned).
// Anything not understood (no function bounds, undecodable bytes) means full.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace sonde::codegen {

// Mirrors enum sonde_vector_save (runtime/session/ModuleAbi.h).
enum class SiteVectorSave : uint32_t { Full = 0, Sse = 1, Args = 2 };

class SiteVectorAnalysis {
public:
  // Reads the executable sections, function symbols and .eh_frame of the ELF
  // object at `path`. A file that cannot be read answers Full for every site.
  explicit SiteVectorAnalysis(const std::string &path);
  ~SiteVectorAnalysis();
  SiteVectorAnalysis(const SiteVectorAnalysis &) = delete;
  SiteVectorAnalysis &operator=(const SiteVectorAnalysis &) = delete;

  // The save a 5-byte marker NOP at link-time address `pc` needs.
  SiteVectorSave saveFor(uint64_t pc);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace sonde::codegen
