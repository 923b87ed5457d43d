// Test helper: the value of an SDT argument (probes/marker ArgSpec) at a marker,
// read from a sonde_marker_frame the way generated code reads $argN.
#pragma once

#include "probes/marker/ArgSpec.h"
#include "runtime/session/MarkerAbi.h"

#include <cstdint>
#include <cstring>
#include <variant>

namespace sonde::agent::test {

inline uint64_t registerValue(const sonde_marker_frame &f, const probes::marker::X86Register &r) {
  // Hardware encoding order: rax rcx rdx rbx rsp rbp rsi rdi r8..r15.
  const uint64_t all[16] = {f.rax, f.rcx, f.rdx, f.rbx, f.rsp, f.rbp, f.rsi, f.rdi,
                            f.r8,  f.r9,  f.r10, f.r11, f.r12, f.r13, f.r14, f.r15};
  uint64_t v = all[r.encoding];
  return r.high8 ? (v >> 8) & 0xff : v;
}

inline int64_t argumentValue(const sonde_marker_frame &f, const probes::marker::ArgSpec &spec) {
  using namespace probes::marker;
  uint64_t raw = 0;
  if (const auto *reg = std::get_if<RegisterOperand>(&spec.operand)) {
    raw = registerValue(f, reg->reg);
  } else if (const auto *imm = std::get_if<ImmediateOperand>(&spec.operand)) {
    raw = static_cast<uint64_t>(imm->value);
  } else {
    const auto &mem = std::get<MemoryOperand>(spec.operand);
    uint64_t address = static_cast<uint64_t>(mem.displacement);
    if (mem.base)
      address += registerValue(f, *mem.base);
    if (mem.index)
      address += registerValue(f, *mem.index) * mem.scale;
    std::memcpy(&raw, reinterpret_cast<const void *>(address), spec.size);
  }
  unsigned bits = spec.size * 8u;
  if (bits < 64) {
    raw &= (uint64_t{1} << bits) - 1;
    if (spec.isSigned && (raw >> (bits - 1)))
      raw |= ~uint64_t{0} << bits;
  }
  return static_cast<int64_t>(raw);
}

} // namespace sonde::agent::test
