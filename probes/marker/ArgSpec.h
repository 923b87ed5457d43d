// One argument of an SDT marker as its note describes it ("-4@%eax", "8@-16(%rbp)",
// "4@$42", "-8@foo+8(%rip)", "8@8(%rax,%rbx,4)"): how many bytes, signed or not, and
// where the value lives at the probe site.
#pragma once

#include "probes/marker/X86Registers.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace sonde::probes::marker {

// The value is in a register (all or part of it, as `reg.width` and `reg.high8` say).
struct RegisterOperand {
  X86Register reg;
};

// The value is a constant: `value`, plus the link-time address of `symbol` if named
// ("$foo+8").
struct ImmediateOperand {
  int64_t value = 0;
  std::string symbol;
  std::optional<uint64_t> symbolAddress; // link-time address of `symbol`, once resolved
};

// The value is in memory at symbol + displacement + base + index * scale. With
// `ripRelative`, `symbol` (or the displacement alone) is resolved relative to the
// instruction, which for a marker is its link-time address.
struct MemoryOperand {
  std::optional<X86Register> base;
  std::optional<X86Register> index;
  uint8_t scale = 1;
  int64_t displacement = 0;
  std::string symbol;
  std::optional<uint64_t> symbolAddress; // link-time address of `symbol`, once resolved
  bool ripRelative = false;
};

using Operand = std::variant<RegisterOperand, ImmediateOperand, MemoryOperand>;

struct ArgSpec {
  uint8_t size = 8;      // bytes: 1, 2, 4 or 8
  bool isSigned = true;  // "-4@..." is signed, "4@..." unsigned
  bool sizeGiven = true; // false for the old size-less form, read as a signed long
  Operand operand;
  std::string text; // the spec as written in the note
};

} // namespace sonde::probes::marker
