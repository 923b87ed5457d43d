// htonl and family (tapset/linux/inet.stp). Network order is big-endian; the
// narrow forms convert the low bits and return them zero-extended.
#include "runtime/strings/StringAbi.h"

#include <bit>
#include <cstdint>

namespace {

template <typename T> T toBigEndian(T v) {
  if constexpr (std::endian::native == std::endian::little)
    return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)) >> (64 - 8 * sizeof(T)));
  else
    return v;
}

template <typename T> int64_t convert(int64_t x) {
  return static_cast<int64_t>(toBigEndian(static_cast<T>(static_cast<uint64_t>(x))));
}

} // namespace

extern "C" int64_t sonde_str_htonll(int64_t x) { return convert<uint64_t>(x); }
extern "C" int64_t sonde_str_htonl(int64_t x) { return convert<uint32_t>(x); }
extern "C" int64_t sonde_str_htons(int64_t x) { return convert<uint16_t>(x); }
// Byte swapping is its own inverse.
extern "C" int64_t sonde_str_ntohll(int64_t x) { return convert<uint64_t>(x); }
extern "C" int64_t sonde_str_ntohl(int64_t x) { return convert<uint32_t>(x); }
extern "C" int64_t sonde_str_ntohs(int64_t x) { return convert<uint16_t>(x); }
