// stap's 64-bit integer arithmetic as its C runtime executes it on x86-64: signed
// overflow wraps, division by zero yields 0, shift counts are taken modulo 64.
// Written with unsigned operations so that the wrapping is defined behaviour here.
#pragma once

#include <cstdint>

namespace sonde::values {

inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }
inline int64_t shiftLeft(int64_t a, uint32_t n) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) << (n & 63));
}
// Arithmetic right shift (what gcc/clang emit for signed >>), count modulo 64 like `sar`.
inline int64_t shiftRight(int64_t a, uint32_t n) { return a >> (n & 63); }

// stap's _stp_div64 with a NULL error pointer.
inline int64_t stapDiv64(int64_t x, int64_t y) {
  if (y == 0)
    return 0;
  if (y == -1)
    return wrapNeg(x);
  return x / y;
}

} // namespace sonde::values
