// The x86-64 general registers as they appear in SDT argument specs: every sized
// name (%rax, %eax, %ax, %al, %ah, %r8d, %sil, ...) mapped to the 64-bit register it
// is part of, so codegen can read the right slot of a saved register set.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sonde::probes::marker {

struct X86Register {
  std::string_view name; // without the '%', as written: "eax", "r8d", "ah"
  uint8_t dwarfNumber;   // DWARF x86-64 numbering: rax 0, rdx 1, rcx 2, rbx 3, ... rip 16
  int8_t encoding;       // hardware number of the 64-bit register (rax 0, rcx 1, ...); -1 for rip
  uint8_t width;         // bytes: 1, 2, 4 or 8
  bool high8 = false;    // %ah/%bh/%ch/%dh: bits 8-15 of the register
};

// The register called `name` (without '%'), if it is an x86-64 general register.
std::optional<X86Register> findX86Register(std::string_view name);

// The DWARF number of %rip, the only register usable as a RIP-relative base.
inline constexpr uint8_t kDwarfRip = 16;

} // namespace sonde::probes::marker
