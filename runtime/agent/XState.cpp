#include "runtime/agent/XState.h"

#include <cpuid.h>

extern "C" {
__attribute__((visibility("hidden"))) uint8_t sonde_agent_xstate_mode = 0;
}

namespace sonde::agent {

namespace {

constexpr unsigned kOsxsave = 1u << 27;
constexpr unsigned kAvx = 1u << 28;
constexpr uint64_t kXcr0Ymm = 1u << 2;      // AVX: upper halves of ymm0-15
constexpr uint64_t kXcr0ZmmHi256 = 1u << 6; // AVX-512: upper halves of zmm0-15

uint64_t readXcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

} // namespace

void detectXState() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & kOsxsave) || !(c & kAvx))
    return; // no AVX: xmm0-15 is all there is
  uint64_t xcr0 = readXcr0();
  if (xcr0 & kXcr0ZmmHi256)
    sonde_agent_xstate_mode = 2;
  else if (xcr0 & kXcr0Ymm)
    sonde_agent_xstate_mode = 1;
}

} // namespace sonde::agent
