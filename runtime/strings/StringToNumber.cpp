// strtol and isdigit (tapset/string.stp). strtol is the kernel's simple_strtol,
// whose rules differ from libc's: see StringAbi.h.
#include "runtime/strings/StringAbi.h"

#include <cstdint>

namespace {

bool isHexDigit(char c) {
  const char lower = static_cast<char>(c | 0x20);
  return (c >= '0' && c <= '9') || (lower >= 'a' && lower <= 'f');
}

// The kernel's _parse_integer_fixup_radix: picks base 0's radix, skips "0x".
const char *fixupRadix(const char *s, uint32_t *base) {
  if (*base == 0) {
    if (s[0] == '0')
      *base = ((s[1] | 0x20) == 'x' && isHexDigit(s[2])) ? 16 : 8;
    else
      *base = 10;
  }
  if (*base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x')
    s += 2;
  return s;
}

// simple_strtoull: only 0-9 and a-f count as digits, whatever the base.
uint64_t parseUnsigned(const char *s, uint32_t base) {
  s = fixupRadix(s, &base);
  uint64_t value = 0;
  for (;; ++s) {
    const char c = *s;
    const char lower = static_cast<char>(c | 0x20);
    uint32_t digit;
    if (c >= '0' && c <= '9')
      digit = static_cast<uint32_t>(c - '0');
    else if (lower >= 'a' && lower <= 'f')
      digit = static_cast<uint32_t>(lower - 'a' + 10);
    else
      break;
    if (digit >= base)
      break;
    value = value * base + digit; // wraps on overflow, as the kernel's does
  }
  return value;
}

} // namespace

extern "C" int64_t sonde_str_strtol(const char *s, int64_t base) {
  // The kernel takes the base as unsigned int.
  const auto radix = static_cast<uint32_t>(static_cast<uint64_t>(base));
  if (s[0] == '-')
    return static_cast<int64_t>(0 - parseUnsigned(s + 1, radix));
  return static_cast<int64_t>(parseUnsigned(s, radix));
}

extern "C" int64_t sonde_str_isdigit(const char *s) { return s[0] >= '0' && s[0] <= '9' ? 1 : 0; }
