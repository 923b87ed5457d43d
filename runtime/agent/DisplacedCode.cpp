#include "runtime/agent/DisplacedCode.h"

#include <cstring>

namespace sonde::agent {

bool writeDisplaced(uint8_t *at, const sonde_displaced_code &code, uintptr_t bias,
                    std::string *error) {
  std::memcpy(at, code.code, code.code_size);
  const auto base = reinterpret_cast<uintptr_t>(at);
  for (uint32_t i = 0; i < code.fixup_count; ++i) {
    const sonde_code_fixup &f = code.fixups[i];
    uint64_t target = f.target + bias;
    if (f.kind == SONDE_FIXUP_ABS64 && f.offset + 8 <= code.code_size) {
      std::memcpy(at + f.offset, &target, 8);
      continue;
    }
    if (f.kind != SONDE_FIXUP_REL32 || f.offset + 4 > code.code_size || f.end > code.code_size) {
      *error = "a fixup of the displaced code is malformed";
      return false;
    }
    int64_t rel = static_cast<int64_t>(target) - static_cast<int64_t>(base + f.end);
    if (rel != static_cast<int32_t>(rel)) {
      *error = "a displaced instruction's target is out of the stub's reach";
      return false;
    }
    int32_t field = static_cast<int32_t>(rel);
    std::memcpy(at + f.offset, &field, 4);
  }
  return true;
}

uintptr_t relocatedPoint(const sonde_displaced_code &code, uintptr_t site, uintptr_t continuation,
                         uintptr_t rip) {
  if (rip <= site || rip >= site + code.length)
    return 0;
  for (uint32_t i = 0; i < code.boundary_count; ++i)
    if (site + code.boundaries[2 * i] == rip)
      return continuation + code.boundaries[2 * i + 1];
  return 0;
}

} // namespace sonde::agent
