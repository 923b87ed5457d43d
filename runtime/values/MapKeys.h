// Hashing of array keys: one multiply and a fold per column, so a one-long-key
// lookup hashes in a handful of instructions. The fold brings the product's high
// bits down, which the index uses (slot = hash & mask).
#pragma once

#include <cstdint>
#include <cstring>

namespace sonde::values {

inline constexpr uint64_t kHashMultiplier = 0x9E3779B97F4A7C15ull;

inline uint64_t load64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t hashColumn(uint64_t h, uint64_t column) {
  h = (h ^ column) * kHashMultiplier;
  return h ^ (h >> 32);
}

inline uint64_t load32(const char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// A string key's bytes (already truncated to MAXSTRINGLEN-1), 8 at a time. A ragged
// end is read with overlapping loads, never byte by byte: the last 8 bytes, or for
// short keys two 4-byte words, or first / middle / last byte.
inline uint64_t hashBytes(const char *p, uint32_t n) {
  uint64_t h = uint64_t{n} * kHashMultiplier;
  if (n >= 8) {
    for (uint32_t i = 0; i + 8 <= n; i += 8)
      h = hashColumn(h, load64(p + i));
    return n % 8 ? hashColumn(h, load64(p + n - 8)) : h;
  }
  uint64_t tail;
  if (n >= 4)
    tail = load32(p) | load32(p + n - 4) << 32;
  else if (n > 0)
    tail = uint64_t{static_cast<unsigned char>(p[0])} |
           uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
           uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
  else
    return h;
  return hashColumn(h, tail);
}

} // namespace sonde::values
