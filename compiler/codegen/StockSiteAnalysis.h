// Whether a stock <sys/sdt.h> marker site (a 1-byte NOP at `pc`) can take the
// jump path of issue 21, decided from the machine code of its ELF object with
// LLVM's x86 disassembler.
//
// The plan displaces the NOP and the whole instructions after it until at
// least 5 bytes are covered (room for a `jmp rel32`), and no more; each displaced
// instruction says how a stub must relocate it. The region is refused, with a
// reason, when executing it anywhere but from its first byte could happen or
// when an instruction cannot be moved:
//  - the enclosing function: its .eh_frame FDE, else its sized symbol; none
//    found, bytes that do not decode from its start, or `pc` not on an
//    instruction boundary of that linear decode;
//  - a direct branch of the function, or of any code of the object (decoded
//    linearly, which covers .cold parts), to an address strictly inside it;
//  - an indirect jump of the function whose jump table JumpTableReader does
//    not read, or whose bound something enters past (a direct branch other
//    than the joins the reader followed, a table target, a landing pad or a
//    symbol in the instructions from the bound to the jump); a table target
//    strictly inside the region is a branch into it;
//  - an exception landing pad (the FDE's LSDA call-site table) or a symbol
//    strictly inside it; the region running past the function's end, unless
//    a jmp or ret of the region leaves before the end and only padding
//    follows it (int3 or NOP encodings no FDE or function symbol covers,
//    displaced as Copy and never run);
//  - a call other than a direct `call rel32` (e8, 5 bytes: after the NOP it
//    always completes the region, so it is the last instruction and returns
//    to the region's end), syscall/sysenter, int/int3/into, ud1/ud2, hlt,
//    endbr, loop/jrcxz (rel8 only), xbegin, a 32-bit (%eip) address, or an
//    instruction the decoder does not know, in it.
// Prefer refusal to a guess: anything not understood refuses.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sonde::codegen {

enum class DisplacedKind {
  Copy,        // position-independent: copied byte for byte
  RipRelative, // a rip-relative operand: its disp32 re-encoded for the stub
  Branch,      // a direct jmp/jcc (rel8 or rel32): re-targeted as rel32 to `target`
  Return,      // ret: copied as it is
  Call,        // a direct `call rel32`, always the region's last instruction: the stub
               // pushes the original return address (address + size, the region's end)
               // and jumps to `target`, so unwinders and exceptions see the original one
};

struct DisplacedInstruction {
  uint64_t address = 0;
  uint32_t size = 0;
  DisplacedKind kind = DisplacedKind::Copy;
  uint32_t dispOffset = 0;  // RipRelative: the disp32 field's offset in the instruction
  uint32_t dispSize = 0;    // RipRelative: 4
  uint64_t target = 0;      // RipRelative: the operand's address; Branch, Call: the destination
  bool conditional = false; // Branch: a jcc (falls through when not taken)
  std::string text;         // AT&T disassembly, for reports
};

struct StockSitePlan {
  uint64_t pc = 0;
  uint32_t length = 0; // [pc, pc + length), at least 5
  std::vector<DisplacedInstruction> instructions;
  std::vector<uint8_t> bytes; // the region's bytes in the file, [pc, pc + length)
  // A jmp or ret in the region: control never reaches its end, the stub needs
  // no jump back. The region still reaches 5 bytes: instructions after a jmp
  // or ret come along (never run by the stub, checked like the rest). A Call
  // does not set it: its callee returns to the region's end, in the original code.
  bool endsInTransfer = false;
};

enum class StockSiteRefusal {
  NoFunction,
  FunctionUndecodable,
  NotAnInstructionBoundary,
  NotANop,
  BranchIntoRegion,
  IndirectJump,
  LandingPadInRegion,
  UnreadableExceptionTable,
  SymbolInRegion,
  RegionPastFunctionEnd,
  CallInRegion,
  SystemInstructionInRegion, // syscall, sysenter, int, int3, ud1, ud2
  EndbrInRegion,
  ShortBranchOnlyInRegion, // loop, loope, loopne, jrcxz, jecxz
  UnknownInstructionInRegion,
};

// A stable name for reports ("branch-into-region").
const char *refusalName(StockSiteRefusal refusal);

struct StockSiteDecision {
  std::optional<StockSitePlan> plan; // set: the jump path
  StockSiteRefusal refusal = StockSiteRefusal::NoFunction;
  std::string reason; // human text naming the addresses and instruction
  // The enclosing function's bounds, when found (for reports).
  uint64_t functionStart = 0, functionEnd = 0;
};

class StockSiteAnalysis {
public:
  // Reads the ELF object at `path`; an unreadable file refuses every site
  // (NoFunction).
  explicit StockSiteAnalysis(const std::string &path);
  ~StockSiteAnalysis();
  StockSiteAnalysis(const StockSiteAnalysis &) = delete;
  StockSiteAnalysis &operator=(const StockSiteAnalysis &) = delete;

  // The decision for a 1-byte NOP at link-time address `pc`.
  StockSiteDecision analyse(uint64_t pc);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace sonde::codegen
