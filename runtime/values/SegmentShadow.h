// sonde's own copy of what it wrote once into a state segment it created and
// nothing may change afterwards: the segment header's static fields and each
// global's header (its kind, string size, the static shape of an array or a
// stats global). Traced processes map the segment writable, so sonde takes
// every size, offset, count and shape from this copy, never from the segment;
// what it must read from the segment (links, counts, index slots, lock words)
// it checks before use and, when a check fails, notes here which global was
// corrupt. A process that registered no shadow (the agent in a target) reads
// the segment's own headers: the lookups return their argument.
#pragma once

#include "runtime/values/GlobalLayout.h"
#include "runtime/values/SegmentFormat.h"

#include <atomic>
#include <optional>
#include <string>

namespace sonde::values {

// sonde, once the segment at `base` is initialized and before any other process
// maps it. Up to 16 segments per process (tests make several).
void shadowSegment(const void *base, uint64_t size, const GlobalLayout &layout);
void dropSegmentShadow(const void *base);

namespace detail {
// Shadows registered in this process: none in a target, where the lookups
// below cost one load.
extern std::atomic<uint32_t> shadowCount;
const GlobalHeader *shadowedGlobal(const GlobalHeader *shared);
const MapHeader *shadowedMap(const MapHeader *shared);
const StatsHeader *shadowedStats(const StatsHeader *shared);
const sonde_limits &shadowedLimits(const sonde_segment *seg);
} // namespace detail

// The trusted copy of the header at `shared` when it lies in a shadowed
// segment, else `shared` itself.
inline const GlobalHeader *trustedGlobal(const GlobalHeader *shared) {
  return detail::shadowCount.load(std::memory_order_acquire) ? detail::shadowedGlobal(shared)
                                                             : shared;
}
inline const MapHeader *trustedMap(const MapHeader *shared) {
  return detail::shadowCount.load(std::memory_order_acquire) ? detail::shadowedMap(shared) : shared;
}
inline const StatsHeader *trustedStats(const StatsHeader *shared) {
  return detail::shadowCount.load(std::memory_order_acquire) ? detail::shadowedStats(shared)
                                                             : shared;
}
// The limits a shadowed segment was created with, else its header's.
inline const sonde_limits &trustedLimits(const sonde_segment *seg) {
  return detail::shadowCount.load(std::memory_order_acquire) ? detail::shadowedLimits(seg)
                                                             : segmentHeader(seg).limits;
}

// Whether `address` lies in a shadowed segment (sonde's own).
bool inShadowedSegment(const void *address);

// Notes damage found at `address` (inside a global, or the segment header):
// "global 'NAME': WHAT", VALUE in place of the "%u" in WHAT. Nothing outside
// a shadowed segment, so the agent never formats on its event path.
[[gnu::cold]] void noteSegmentCorruption(const void *address, const char *what, uint64_t value);
[[gnu::cold]] void noteSegmentCorruption(const void *address, const std::string &what);

// The first damage noted in the shadowed segment at `base`, if any.
std::optional<std::string> segmentCorruption(const void *base);

// The static header fields of the shadowed segment at `base` still as created:
// nullopt, or what changed.
std::optional<std::string> checkSegmentHeader(const void *base);

// Whether the static fields of the global header at `shared` (its kind and
// string size, an array's or a stats global's shape) still read as created:
// false after noting the damage. True outside a shadowed segment.
bool globalHeaderIntact(const GlobalHeader *shared);

} // namespace sonde::values
