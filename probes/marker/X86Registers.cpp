#include "probes/marker/X86Registers.h"

#include <array>

namespace sonde::probes::marker {
namespace {

// One row per 64-bit register: its DWARF and hardware numbers and its names by width.
struct RegisterFamily {
  uint8_t dwarf;
  int8_t encoding;
  std::string_view q, d, w, b, h; // 8, 4, 2, 1 byte names; h: high byte, if any
};

constexpr std::array<RegisterFamily, 17> kFamilies{{
    {0, 0, "rax", "eax", "ax", "al", "ah"},
    {1, 2, "rdx", "edx", "dx", "dl", "dh"},
    {2, 1, "rcx", "ecx", "cx", "cl", "ch"},
    {3, 3, "rbx", "ebx", "bx", "bl", "bh"},
    {4, 6, "rsi", "esi", "si", "sil", ""},
    {5, 7, "rdi", "edi", "di", "dil", ""},
    {6, 5, "rbp", "ebp", "bp", "bpl", ""},
    {7, 4, "rsp", "esp", "sp", "spl", ""},
    {8, 8, "r8", "r8d", "r8w", "r8b", ""},
    {9, 9, "r9", "r9d", "r9w", "r9b", ""},
    {10, 10, "r10", "r10d", "r10w", "r10b", ""},
    {11, 11, "r11", "r11d", "r11w", "r11b", ""},
    {12, 12, "r12", "r12d", "r12w", "r12b", ""},
    {13, 13, "r13", "r13d", "r13w", "r13b", ""},
    {14, 14, "r14", "r14d", "r14w", "r14b", ""},
    {15, 15, "r15", "r15d", "r15w", "r15b", ""},
    {kDwarfRip, -1, "rip", "eip", "", "", ""},
}};

} // namespace

std::optional<X86Register> findX86Register(std::string_view name) {
  if (name.empty())
    return std::nullopt;
  for (const RegisterFamily &f : kFamilies) {
    if (name == f.q)
      return X86Register{f.q, f.dwarf, f.encoding, 8};
    if (name == f.d)
      return X86Register{f.d, f.dwarf, f.encoding, 4};
    if (name == f.w)
      return X86Register{f.w, f.dwarf, f.encoding, 2};
    if (name == f.b)
      return X86Register{f.b, f.dwarf, f.encoding, 1};
    if (name == f.h)
      return X86Register{f.h, f.dwarf, f.encoding, 1, true};
  }
  return std::nullopt;
}

} // namespace sonde::probes::marker
