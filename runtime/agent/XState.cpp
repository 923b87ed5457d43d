#include "runtime/agent/XState.h"

#include <cpuid.h>

extern "C" {
__attribute__((visibility("hidden"))) uint8_t sonde_agent_xstate_mode = 0;
__attribute__((visibility("hidden"))) uint64_t sonde_agent_xsave_size = 0;
__attribute__((visibility("hidden"))) uint32_t sonde_agent_xsave_mask = 0;
}

namespace sonde::agent {

namespace {

constexpr unsigned kOsxsave = 1u << 27;
constexpr unsigned kAvx = 1u << 28;
// x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM: what compiled code can hold live.
constexpr uint32_t kWantedComponents = 0xe7;
constexpr uint32_t kWideComponents = 0xe4;

uint64_t readXcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

} // namespace

void detectXState() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & kOsxsave) || !(c & kAvx))
    return; // no AVX: the SSE save is complete
  uint32_t mask = static_cast<uint32_t>(readXcr0()) & kWantedComponents;
  if (!(mask & kWideComponents))
    return;
  // Standard (non-compacted) layout: each component at its CPUID-reported offset.
  uint64_t size = 576; // legacy area + XSAVE header
  for (unsigned i = 2; i < 8; ++i) {
    if (!(mask & (1u << i)))
      continue;
    __cpuid_count(0xd, i, a, b, c, d);
    if (uint64_t end = uint64_t{b} + a; end > size)
      size = end;
  }
  sonde_agent_xsave_size = (size + 63) & ~uint64_t{63};
  sonde_agent_xsave_mask = mask;
  __cpuid_count(0xd, 1, a, b, c, d);
  bool xinuse = a & (1u << 2);
  sonde_agent_xstate_mode = xinuse ? 1 : 2;
}

} // namespace sonde::agent
