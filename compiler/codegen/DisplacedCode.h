// The code a stock marker's stub runs after the handler (issue 21's jump
// path): the instructions a StockSitePlan displaces, relocated to run at any
// address within ±2 GiB of the site, then a jump back to the first byte after
// the region. Built by sonde; the agent copies it into the stub and applies the
// fixups with the object's load bias (runtime/agent/StubPool.cpp), so the
// target never decodes an instruction.
//
// Relocation, per DisplacedKind:
//  - Copy, Return: the bytes as they are (the site's NOP itself is dropped);
//  - RipRelative: the bytes, with a fixup of the disp32 to the same operand;
//  - Branch: `jmp rel32` or `jcc rel32` (a rel8 form widened) to the original
//    destination;
//  - Call: `push <original return address>` (from a qword after the code) and
//    `jmp rel32` to the callee, so the callee, its unwinder and exceptions see
//    the return address of the original call.
#pragma once

#include "codegen/StockSiteAnalysis.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde::codegen {

enum class CodeFixupKind : uint32_t {
  Rel32 = 1, // int32 at `offset` = target - (code + end)
  Abs64 = 2, // uint64 at `offset` = target
};

struct CodeFixup {
  uint32_t offset = 0;
  CodeFixupKind kind = CodeFixupKind::Rel32;
  uint32_t end = 0;    // Rel32: the offset the field is relative to (its instruction's end)
  uint64_t target = 0; // link-time address
};

// Where a thread stopped at `regionOffset` bytes into the region continues in
// the code (a displaced instruction that runs, other than the NOP).
struct CodeBoundary {
  uint32_t regionOffset = 0;
  uint32_t codeOffset = 0;
};

struct DisplacedCode {
  uint64_t pc = 0;
  uint32_t length = 0;           // bytes displaced at pc
  std::vector<uint8_t> original; // the region's bytes, checked by the agent before patching
  std::vector<uint8_t> code;
  std::vector<CodeFixup> fixups;
  std::vector<CodeBoundary> boundaries;
};

// The relocated code for `plan`, or nullopt with `error` set (an instruction
// whose encoding is not the one its kind expects).
std::optional<DisplacedCode> relocateDisplaced(const StockSitePlan &plan, std::string *error);

} // namespace sonde::codegen
