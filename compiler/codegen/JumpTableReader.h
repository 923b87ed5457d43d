// The targets of an indirect jump through a jump table, read from the ELF
// object, for StockSiteAnalysis (issue 21): only the shapes GCC and clang emit
// for a switch or a computed goto, anything else is not read.
//
// Recognised, on the linear decode of the function (every instruction from
// the bound to the jump in a straight line, no other branch, call or ret,
// except at a join: where direct branches of the function meet on the way to
// a `jmp *%rZ`, as GCC merges a computed goto's dispatches, each branch is
// followed back to a table load of its own):
//  - position-independent: `lea T(%rip),%rX; movslq (%rX,%rI,4),%rZ;
//    add %rX,%rZ; jmp *%rZ`, targets T + int32 entry, table read-only;
//  - position-dependent (ET_EXEC only: absolute entries are not relocated):
//    `jmp *T(,%rI,8)` or `mov T(,%rI,8),%rZ; jmp *%rZ`, 8-byte entries.
// The index %rI is bounded by `cmp $N; ja` (N + 1 entries) on the value the
// index was last written from: itself at 64 bits, or, through a zero-extending
// `mov %eS,%eI` / `mov MEM,%eI`, the 32-bit register or the memory operand
// (no store and no write to its address registers between); or by a
// `movzbl` writing it (256 entries). Other instructions between may not write
// any register the match relies on.
//
// A bound checked on memory and loaded again holds unless another thread
// writes that memory between the two reads: a data race, in which the
// program's own jump already leaves its table.
//
// The caller must still show that the `guarded` ranges are entered only by
// falling through or at the `joins` from branches inside the function (no
// other branch target, no table target, landing pad or symbol in them): the
// bounds hold only then.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde::codegen {

class ElfMachineCode;
struct DecodedInstruction;

struct AddressRange {
  uint64_t start, end;
};

struct JumpTable {
  uint64_t jump = 0;             // the indirect jmp's address
  std::vector<uint64_t> tables;  // the tables read (one per path to the jump)
  uint64_t entries = 0;          // entries read, over every table
  std::vector<uint64_t> targets; // distinct, sorted
  // [start, end) address ranges the bounds hold on only if entered by falling
  // through, except at `joins`, where every direct branch of the function to
  // it was followed back to a bounded table load of its own.
  std::vector<AddressRange> guarded;
  std::vector<uint64_t> joins;
};

// The table of the indirect jump insts[index] (a linear decode of its
// function), or nullopt with `why` saying what was not understood.
std::optional<JumpTable> readJumpTable(const ElfMachineCode &code,
                                       const std::vector<DecodedInstruction> &insts, size_t index,
                                       std::string &why);

// The same for the indirect jump at `jump` of the ELF object at `path`, in
// the function its FDE or sized symbol gives.
std::optional<JumpTable> readJumpTableAt(const std::string &path, uint64_t jump, std::string &why);

} // namespace sonde::codegen
